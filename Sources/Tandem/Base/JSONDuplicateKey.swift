/// A key that appears twice in one object of JSON text (`{"title":"a","title":"b"}`).
///
/// JSON parsers keep one of the two silently (`JSONSerialization` the last, `JSONDecoder` the
/// first), so Tandem looks for them before parsing JSON a user wrote (schema files, import
/// payloads, SQL arguments) and refuses the text instead. Keys are compared as Swift compares
/// strings (canonical equivalence: `"é"` and `"e\u{301}"` are one key), after their escapes are
/// read (`"\u0061"` is `"a"`).
struct JSONDuplicateKey: Equatable, CustomStringConvertible {
    /// The object holding the key twice: `tables[0].columns[1]`, or empty for the top level.
    let path: String
    let key: String

    var description: String {
        "the key '\(key)' appears twice in \(path.isEmpty ? "the top-level object" : "the object at \(path)") (JSON keys must be unique)"
    }

    /// The first duplicate key in `text`, which must be valid JSON (parse it first), or nil.
    /// Nesting is as deep as the parser allowed (`JSONSerialization` stops at 512 levels).
    /// - Parameter path: where `text` stands in a larger document (`[3]`), prefixed to the path.
    static func first(in text: String, path: String = "") -> JSONDuplicateKey? {
        var walker = Walker(bytes: Array(text.utf8))
        return walker.value(path: path)
    }

    private struct Walker {
        let bytes: [UInt8]
        var index = 0

        var current: UInt8 { index < bytes.count ? bytes[index] : 0 }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        /// Walks one value; the first duplicate key in it, if any.
        mutating func value(path: String) -> JSONDuplicateKey? {
            skipSpace()
            switch current {
            case UInt8(ascii: "{"):
                index += 1
                var keys: Set<String> = []
                skipSpace()
                if current == UInt8(ascii: "}") { index += 1; return nil }
                while index < bytes.count {
                    skipSpace()
                    let key = string()
                    if !keys.insert(key).inserted { return JSONDuplicateKey(path: path, key: key) }
                    skipSpace()
                    index += 1  // ':'
                    if let found = value(path: path.isEmpty ? key : path + "." + key) { return found }
                    skipSpace()
                    let separator = current
                    index += 1
                    if separator != UInt8(ascii: ",") { break }
                }
            case UInt8(ascii: "["):
                index += 1
                skipSpace()
                if current == UInt8(ascii: "]") { index += 1; return nil }
                var position = 0
                while index < bytes.count {
                    if let found = value(path: path + "[\(position)]") { return found }
                    position += 1
                    skipSpace()
                    let separator = current
                    index += 1
                    if separator != UInt8(ascii: ",") { break }
                }
            case UInt8(ascii: "\""):
                _ = string()
            default:  // a number, true, false or null
                while index < bytes.count, !",]} \t\r\n".utf8.contains(bytes[index]) { index += 1 }
            }
            return nil
        }

        /// A string literal at `index`, its escapes read.
        mutating func string() -> String {
            index += 1  // the opening quote
            var units: [UInt16] = []
            var raw: [UInt8] = []
            func flush() {
                units += String(decoding: raw, as: UTF8.self).utf16
                raw.removeAll()
            }
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                guard bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count else {
                    raw.append(bytes[index])
                    index += 1
                    continue
                }
                flush()
                let escaped = bytes[index + 1]
                index += 2
                switch escaped {
                case UInt8(ascii: "u"):
                    let hex = String(decoding: bytes[index..<min(index + 4, bytes.count)], as: UTF8.self)
                    units.append(UInt16(hex, radix: 16) ?? 0xFFFD)
                    index += 4
                case UInt8(ascii: "n"): units.append(0x0A)
                case UInt8(ascii: "t"): units.append(0x09)
                case UInt8(ascii: "r"): units.append(0x0D)
                case UInt8(ascii: "b"): units.append(0x08)
                case UInt8(ascii: "f"): units.append(0x0C)
                default: units.append(UInt16(escaped))  // \" \\ \/
                }
            }
            flush()
            index += 1  // the closing quote
            return String(decoding: units, as: UTF16.self)
        }
    }
}
