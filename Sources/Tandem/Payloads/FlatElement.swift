import Foundation

/// An element read without building a ``JSONValue``: an object whose members are all scalars
/// (null, true, false, numbers, strings), the usual shape of a row, with each key and string
/// left in place in the payload's buffer.
///
/// Anything else (a nested value, a key with an escape or outside ASCII, text that is not JSON)
/// is not read here: ``parse(_:_:)`` returns false, and the import reads the element the general
/// way (``JSONValue``), which refuses what is wrong with the same messages as always. Numbers
/// keep their kind as ``JSONParser`` reads them: a literal with a fraction or an exponent is a
/// real, an integer literal an integer (a real past Int64's range).
struct FlatElement {
    enum Value {
        case null
        case bool(Bool)
        case integer(Int64)
        case double(Double)
        /// The bytes between the quotes; `escaped` when a backslash is among them, `ascii` when
        /// every byte is below 0x80.
        case string(Range<Int>, escaped: Bool, ascii: Bool)
    }

    struct Member {
        var key: Range<Int>
        var value: Value
    }

    private(set) var members: [Member] = []

    init() { members.reserveCapacity(16) }

    /// Reads the object `bytes[range]`; false when it is not a flat object of JSON.
    mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        members.removeAll(keepingCapacity: true)
        var reader = Reader(bytes: bytes, position: range.lowerBound, end: range.upperBound)
        guard reader.take(UInt8(ascii: "{")) else { return false }
        reader.skipSpace()
        if reader.take(UInt8(ascii: "}")) { reader.skipSpace(); return reader.position == reader.end }
        while true {
            reader.skipSpace()
            guard let key = reader.key() else { return false }
            reader.skipSpace()
            guard reader.take(UInt8(ascii: ":")) else { return false }
            reader.skipSpace()
            guard let value = reader.value() else { return false }
            members.append(Member(key: key, value: value))
            reader.skipSpace()
            if reader.take(UInt8(ascii: ",")) { continue }
            guard reader.take(UInt8(ascii: "}")) else { return false }
            return reader.position == reader.end
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var position: Int
        let end: Int

        @inline(__always) var current: UInt8? { position < end ? bytes[position] : nil }

        @inline(__always) mutating func take(_ byte: UInt8) -> Bool {
            guard position < end, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        @inline(__always) mutating func skipSpace() {
            while position < end {
                let byte = bytes[position]
                guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
                position += 1
            }
        }

        /// A key of printable ASCII without escapes: what the key cache compares by bytes.
        mutating func key() -> Range<Int>? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = position
            while position < end {
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    position += 1
                    return start..<(position - 1)
                }
                guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
                position += 1
            }
            return nil
        }

        mutating func value() -> Value? {
            guard let byte = current else { return nil }
            switch byte {
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            default: return nil  // a nested value, or not JSON
            }
        }

        mutating func literal(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard end - position >= count else { return false }
            for offset in 0..<count where bytes[position + offset] != text.utf8Start[offset] { return false }
            position += count
            return true
        }

        /// The string's bytes; control characters (invalid in JSON strings) are left to the
        /// general reader to refuse.
        mutating func string() -> Value? {
            position += 1
            let start = position
            var escaped = false
            var ascii = true
            while position < end {
                let byte = bytes[position]
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    return .string(start..<(position - 1), escaped: escaped, ascii: ascii)
                case UInt8(ascii: "\\"):
                    escaped = true
                    position += 2
                case 0..<0x20:
                    return nil
                default:
                    if byte >= 0x80 { ascii = false }
                    position += 1
                }
            }
            return nil
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
        mutating func number() -> Value? {
            let start = position
            let negative = take(UInt8(ascii: "-"))
            guard let first = current, isDigit(first) else { return nil }
            var magnitude: UInt64 = 0
            var overflow = false
            if first == UInt8(ascii: "0") {
                position += 1
            } else {
                while let digit = current, isDigit(digit) {
                    let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
                    let (sum, o2) = times10.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
                    overflow = overflow || o1 || o2
                    magnitude = sum
                    position += 1
                }
            }
            var isReal = false
            if take(UInt8(ascii: ".")) {
                guard let digit = current, isDigit(digit) else { return nil }
                while let digit = current, isDigit(digit) { position += 1 }
                isReal = true
            }
            if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
                if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
                guard let digit = current, isDigit(digit) else { return nil }
                while let digit = current, isDigit(digit) { position += 1 }
                isReal = true
            }
            if !isReal, !overflow {
                if negative, magnitude <= UInt64(Int64.max) + 1 { return .integer(magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude)) }
                if !negative, magnitude <= UInt64(Int64.max) { return .integer(Int64(magnitude)) }
            }
            // A number no Int64 or Double holds exactly is for the general way to judge.
            let literal = UnsafeBufferPointer(rebasing: bytes[start..<position])
            guard let double = FlatElement.double(literal), double.isFinite else { return nil }
            if !isReal, JSONInexactNumber(literal: String(decoding: literal, as: UTF8.self), isInteger: true, value: double) != nil { return nil }
            return .double(double)
        }

        @inline(__always) func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    }

    /// A JSON number's text as the nearest double (as `Double(String)` reads it, in any locale).
    static func double(_ literal: UnsafeBufferPointer<UInt8>) -> Double? {
        guard literal.count < 64 else { return Double(String(decoding: literal, as: UTF8.self)) }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { text in
            literal.withMemoryRebound(to: CChar.self) { _ = text.initialize(from: $0) }
            text[literal.count] = 0
            return CNumericLocale.strtod(text.baseAddress!)
        }
    }

    /// A string member's text: its escapes read, checked to be UTF-8; nil when it is neither
    /// (the general reader then names the problem).
    static func text(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, escaped: Bool, ascii: Bool) -> String? {
        let raw = UnsafeBufferPointer(rebasing: bytes[range])
        if !escaped {
            return ascii ? String(decoding: raw, as: UTF8.self) : String(validating: raw, as: UTF8.self)
        }
        guard ascii || String(validating: raw, as: UTF8.self) != nil else { return nil }
        var parser = JSONParser(bytes: UnsafeBufferPointer(rebasing: bytes[(range.lowerBound - 1)..<(range.upperBound + 1)]))
        guard case .string(let text)? = parser.document() else { return nil }
        return text
    }
}
