import CSQLite
import Foundation

/// Row values as JSON text, written the way a view's INSERT trigger writes them
/// (`TableSchema.jsonValue`), for ``RowInserter``, which builds the text in Swift instead of
/// running the trigger per row. The values read back identically either way (the digits of an
/// 18-digit real may differ, for the same double); both paths are compared in `BulkInsertTests`.
///
/// - Text: `"` and `\` escaped, U+0008/09/0A/0C/0D as `\b \t \n \f \r`, other control characters
///   (NUL included) as `\u00xx`, everything else as is, as SQLite's `json_quote` writes it.
/// - Integers in decimal. NULL as `null`.
/// - Reals as the trigger writes them: 15 significant digits when those parse back to the same
///   double, else 18 (always exact); a decimal point always (`2.0`, `1.0e+300`); `-0.0` keeps its sign.
/// - Values are first made what the column stores (``StoredValue``), which refuses BLOBs,
///   infinite reals and values that do not convert to the column's type exactly.
struct RowJSON {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    mutating func append(raw: StaticString) {
        raw.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func append(raw: [UInt8]) { bytes.append(contentsOf: raw) }

    /// A string's UTF-8 bytes, unquoted.
    mutating func append(utf8Of string: String) {
        var string = string
        string.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// A JSON string.
    mutating func append(string: String) {
        var string = string
        string.withUTF8 { utf8 in
            bytes.append(UInt8(ascii: "\""))
            if utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
                bytes.append(contentsOf: utf8)
            } else {
                for byte in utf8 { appendEscaped(byte) }
            }
            bytes.append(UInt8(ascii: "\""))
        }
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"):
            bytes.append(UInt8(ascii: "\\"))
            bytes.append(byte)
        case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
        case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        case 0x0a: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0c: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
        case 0x0d: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0..<0x20:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xf)]])
        default:
            bytes.append(byte)
        }
    }

    /// Bytes already appended (`range`), appended again.
    mutating func append(copyOf range: Range<Int>) {
        let end = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: range.count))
        bytes.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            (base + end).update(from: base + range.lowerBound, count: range.count)
        }
    }

    /// Drops the bytes from `count` on (a row that failed half-way).
    mutating func truncate(to count: Int) { bytes.removeSubrange(count...) }

    /// Empties the buffer, keeping its storage.
    mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// A column's value as ``StoredValue`` gives it: NULL, an integer, a finite real or text.
    mutating func append(_ value: DatabaseValue) {
        switch value {
        case .null: append(raw: "null")
        case .integer(let i):
            var i = i
            if i < 0 { bytes.append(UInt8(ascii: "-")) }
            let start = bytes.count
            repeat {
                bytes.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: (i % 10).magnitude))
                i /= 10
            } while i != 0
            bytes[start...].reverse()
        case .text(let s): append(string: s)
        case .real(let d):
            precondition(d.isFinite, "StoredValue refuses infinite reals and NaN")
            Self.appendReal(d, to: &bytes)
        case .blob:
            preconditionFailure("StoredValue refuses BLOBs")
        }
    }

    /// `"name":` for each of the table's columns, ready to append.
    static func keys(of table: TableSchema) -> [[UInt8]] {
        table.columns.map { column in
            var key = RowJSON()
            key.append(string: column.name)
            key.append(raw: ":")
            return key.bytes
        }
    }

    /// A finite real as the trigger writes it, appended to `bytes`.
    static func appendReal(_ d: Double, to bytes: inout [UInt8]) {
        if d == 0 {
            bytes.append(
                contentsOf: d.sign == .minus
                    ? [UInt8(ascii: "-"), UInt8(ascii: "0"), UInt8(ascii: "."), UInt8(ascii: "0")] : [UInt8(ascii: "0"), UInt8(ascii: "."), UInt8(ascii: "0")])
            return
        }
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 40) { buffer in
            var count = formatted(d, significant: 15, into: buffer)
            if CNumericLocale.strtod(buffer.baseAddress!) != d { count = formatted(d, significant: 18, into: buffer) }
            // Always a decimal point in the mantissa, as SQLite's `%!g` writes it: `2` → `2.0`.
            var exponent = count
            var point = false
            for index in 0..<count {
                let byte = UInt8(bitPattern: buffer[index])
                if byte == UInt8(ascii: ".") { point = true }
                if byte == UInt8(ascii: "e") { exponent = index; break }
            }
            for index in 0..<exponent { bytes.append(UInt8(bitPattern: buffer[index])) }
            if !point { bytes.append(contentsOf: [UInt8(ascii: "."), UInt8(ascii: "0")]) }
            for index in exponent..<count { bytes.append(UInt8(bitPattern: buffer[index])) }
        }
    }

    /// `%.<n>g` of `d` (the C library's correctly rounded conversion) into `buffer`, NUL-terminated,
    /// in the C locale whatever the process's `LC_NUMERIC` says (a decimal comma would make the
    /// JSON invalid); returns its length.
    private static func formatted(_ d: Double, significant: Int32, into buffer: UnsafeMutableBufferPointer<CChar>) -> Int {
        CNumericLocale.run { Int(tandem_format_double(buffer.baseAddress, Int32(buffer.count), significant, d)) }
    }
}
