/// A JSON parser (RFC 8259) over UTF-8 bytes that keeps each number's kind as written, for
/// ``JSONValue/init(parsing:)``. Foundation's `JSONSerialization` reads some reals written with
/// a fraction (`-469935638657203.0`, `4.6116860184273879e+18`) as decimal numbers whose text no
/// longer shows the fraction, so their kind, and at 18 digits their value, could not be told.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    /// Arrays and objects open at once; deeper documents are refused rather than recursed into.
    private var depth = 0
    private static let maximumDepth = 512

    init(bytes: UnsafeBufferPointer<UInt8>, exactNumbers: Bool = false) {
        self.bytes = bytes
        self.exactNumbers = exactNumbers
    }

    /// Whether a number no `Int64` or `Double` holds exactly ends the parse
    /// (``JSONInexactNumber``) instead of becoming the nearest `Double`.
    private let exactNumbers: Bool
    /// The number that ended the parse, with exactNumbers set.
    private(set) var inexactNumber: JSONInexactNumber?

    /// Set when an object held a key twice (keys compared as Swift compares strings); the
    /// value keeps the last, and ``JSONDuplicateKey`` then names it for the error.
    private(set) var sawDuplicateKey = false

    /// The one value the text holds, with white space around it; nil when it is not JSON.
    mutating func document() -> JSONValue? {
        guard let value = value() else { return nil }
        skipSpace()
        return position == bytes.count ? value : nil
    }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipSpace() {
        while let byte = current, byte == 0x20 || byte == 0x0a || byte == 0x0d || byte == 0x09 { position += 1 }
    }

    private mutating func consume(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[position + offset] != literal.utf8Start[offset] { return false }
        position += count
        return true
    }

    private mutating func value() -> JSONValue? {
        skipSpace()
        guard let byte = current else { return nil }
        switch byte {
        case UInt8(ascii: "{"): return object()
        case UInt8(ascii: "["): return array()
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"): return consume("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return consume("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return consume("null") ? .null : nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return nil
        }
    }

    private mutating func object() -> JSONValue? {
        guard depth < Self.maximumDepth else { return nil }
        depth += 1
        defer { depth -= 1 }
        position += 1
        var members: [String: JSONValue] = [:]
        skipSpace()
        if current == UInt8(ascii: "}") { position += 1; return .object(members) }
        while true {
            skipSpace()
            guard current == UInt8(ascii: "\""), let key = string() else { return nil }
            skipSpace()
            guard current == UInt8(ascii: ":") else { return nil }
            position += 1
            guard let value = value() else {
                inexactNumber?.path.insert(key, at: 0)
                return nil
            }
            if members.updateValue(value, forKey: key) != nil { sawDuplicateKey = true }
            skipSpace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return .object(members)
            default: return nil
            }
        }
    }

    private mutating func array() -> JSONValue? {
        guard depth < Self.maximumDepth else { return nil }
        depth += 1
        defer { depth -= 1 }
        position += 1
        var elements: [JSONValue] = []
        skipSpace()
        if current == UInt8(ascii: "]") { position += 1; return .array(elements) }
        while true {
            guard let value = value() else {
                inexactNumber?.path.insert("[\(elements.count)]", at: 0)
                return nil
            }
            elements.append(value)
            skipSpace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): position += 1; return .array(elements)
            default: return nil
            }
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() -> JSONValue? {
        let start = position
        if current == UInt8(ascii: "-") { position += 1 }
        guard let first = current, isDigit(first) else { return nil }
        position += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        var isReal = false
        if current == UInt8(ascii: ".") {
            position += 1
            guard let digit = current, isDigit(digit) else { return nil }
            skipDigits()
            isReal = true
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard let digit = current, isDigit(digit) else { return nil }
            skipDigits()
            isReal = true
        }
        if !isReal, position - start <= 18 {
            // At most 18 characters: an integer that Int64 holds, read from its digits directly.
            var integer: Int64 = 0
            for byte in bytes[start..<position] where byte != UInt8(ascii: "-") { integer = integer * 10 + Int64(byte - UInt8(ascii: "0")) }
            return .integer(bytes[start] == UInt8(ascii: "-") ? -integer : integer)
        }
        let literal = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if !isReal, let integer = Int64(literal) { return .integer(integer) }
        guard let double = Double(literal) else { return nil }
        if exactNumbers, let misfit = JSONInexactNumber(literal: literal, isInteger: !isReal, value: double) {
            inexactNumber = misfit
            return nil
        }
        return .double(double)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = current, isDigit(byte) { position += 1 }
    }

    /// A string literal, its escapes undone; nil for a control character, a bad escape or a
    /// lone surrogate.
    private mutating func string() -> String? {
        position += 1
        var text = ""
        var runStart = position
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                // The bytes since the last escape, then the escape or the end.
                text += String(decoding: UnsafeBufferPointer(rebasing: bytes[runStart..<position]), as: UTF8.self)
                position += 1
                if byte == UInt8(ascii: "\"") { return text }
                guard let escaped = escape() else { return nil }
                text.unicodeScalars.append(escaped)
                runStart = position
            case 0..<0x20:
                return nil
            default:
                position += 1
            }
        }
        return nil
    }

    /// The character an escape (after its backslash) stands for.
    private mutating func escape() -> Unicode.Scalar? {
        guard let byte = current else { return nil }
        position += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{8}"
        case UInt8(ascii: "f"): return "\u{c}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            guard let unit = hex4() else { return nil }
            switch unit {
            case 0xD800..<0xDC00:
                guard consume("\\u"), let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
            case 0xDC00..<0xE000: return nil
            default: return Unicode.Scalar(unit)
            }
        default: return nil
        }
    }

    private mutating func hex4() -> UInt32? {
        guard position + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }
}
