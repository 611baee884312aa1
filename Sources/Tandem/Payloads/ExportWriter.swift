import Foundation

/// Writes exported rows as JSON into a buffer handed to the output in pieces of about 64 KiB.
///
/// Values are written as ``JSONValue`` writes them (so an export reads back as it always did):
/// NULL as null, integers in decimal, reals in Swift's shortest form that reads back as the same
/// double (always with a fraction or an exponent: `2.0`), text with `"`, `\` and control
/// characters escaped, blobs as base64 text.
struct ExportWriter {
    let format: PayloadFormat
    private let output: (UnsafeRawBufferPointer) throws -> Void
    /// `"id":` then `,"name":` per column, in the key style asked for.
    private let keys: [[UInt8]]
    private var bytes: [UInt8] = []
    private(set) var rows = 0

    init(columns: [String], keys style: KeyStyle, format: PayloadFormat, output: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.format = format
        self.output = output
        keys = columns.enumerated().map { offset, column in
            var key: [UInt8] = offset == 0 ? [] : [UInt8(ascii: ",")]
            ExportWriter.appendString(style == .camel ? KeyConvention.camel(column) : column, to: &key)
            key.append(UInt8(ascii: ":"))
            return key
        }
        bytes.reserveCapacity(80 << 10)
        if format == .array { bytes.append(UInt8(ascii: "[")) }
    }

    /// Starts the next row's object.
    mutating func beginRow() {
        if format == .array, rows > 0 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "{"))
    }

    /// The key of column `index` (0 is the id).
    mutating func key(_ index: Int) { bytes.append(contentsOf: keys[index]) }

    mutating func endRow() throws {
        bytes.append(UInt8(ascii: "}"))
        if format == .ndjson { bytes.append(0x0A) }
        rows += 1
        if bytes.count >= 64 << 10 { try flush() }
    }

    /// The array's end (and a newline), and whatever is buffered.
    mutating func finish() throws {
        if format == .array { bytes.append(contentsOf: [UInt8(ascii: "]"), 0x0A]) }
        try flush()
    }

    private mutating func flush() throws {
        guard !bytes.isEmpty else { return }
        try bytes.withUnsafeBytes { try output($0) }
        bytes.removeAll(keepingCapacity: true)
    }

    mutating func appendNull() { bytes.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")]) }

    /// Bytes already valid JSON (an integer's digits).
    mutating func appendRaw(_ raw: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: raw) }

    mutating func append(_ value: DatabaseValue) {
        switch value {
        case .null: appendNull()
        case .integer(let i): bytes.append(contentsOf: String(i).utf8)
        case .real(let d): append(real: d)
        case .text(let s): Self.appendString(s, to: &bytes)
        case .blob(let data): Self.appendString(data.base64EncodedString(), to: &bytes)
        }
    }

    mutating func append(real d: Double) {
        if let text = JSONValue.realText(d) { bytes.append(contentsOf: text.utf8) } else { appendNull() }
    }

    /// Text given as UTF-8 bytes (bytes that are not UTF-8 read as U+FFFD, as a `String` reads them).
    mutating func appendString(utf8 raw: UnsafeBufferPointer<UInt8>) {
        guard raw.allSatisfy({ $0 < 0x80 }) || String(validating: raw, as: UTF8.self) != nil else {
            Self.appendString(String(decoding: raw, as: UTF8.self), to: &bytes)
            return
        }
        Self.appendEscaped(raw, to: &bytes)
    }

    static func appendString(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { appendEscaped($0, to: &bytes) }
    }

    /// A JSON string literal of valid UTF-8, escaped as ``JSONValue`` escapes it: `"`, `\`,
    /// `\n`, `\r`, `\t`, and the other C0 controls and DEL as `\u00xx`.
    private static func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var run = 0
        for (index, byte) in utf8.enumerated() {
            let escape: [UInt8]
            switch byte {
            case UInt8(ascii: "\""): escape = [UInt8(ascii: "\\"), byte]
            case UInt8(ascii: "\\"): escape = [UInt8(ascii: "\\"), byte]
            case 0x0A: escape = [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: escape = [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: escape = [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20, 0x7F:
                let hex = Array("0123456789abcdef".utf8)
                escape = [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: continue
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<index]))
            bytes.append(contentsOf: escape)
            run = index + 1
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...]))
        bytes.append(UInt8(ascii: "\""))
    }
}
