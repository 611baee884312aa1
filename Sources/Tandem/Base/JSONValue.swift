import Foundation

/// A JSON value, as carried in CRUD entries and sync changes.
///
/// Numbers keep their kind: `2` is ``integer(_:)`` and `2.0` is ``double(_:)``, in both
/// directions. ``init(parsing:)`` reads JSON text that way and ``jsonText`` writes it back that
/// way (reals in Swift's shortest form that reads back as the same `Double`, such as `2.0`,
/// `-0.0` or `1.7976931348623157e+308`). Use these two, not `JSONDecoder`/`JSONEncoder`, where
/// a value's kind matters: those decode `2.0` as an integer first and encode `2.0` as `2`.
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses JSON text (RFC 8259), keeping each number's kind exactly as written: a literal with
    /// a fraction or an exponent is a real (`2.0`, `9007199254740992.0`, `4.6e+18`), read to the
    /// nearest `Double`; an integer literal is an integer, or a real when it is outside Int64's
    /// range, as in SQLite's JSON functions.
    /// - Throws: ``TandemError/invalidJSON(_:)`` when `text` is not JSON, or when an object holds
    ///   a key twice (which value was meant cannot be known; the message names the key and where).
    ///
    /// Related documentation: https://www.sqlite.org/json1.html (how SQLite reads JSON numbers)
    public init(parsing text: String) throws {
        try self.init(parsing: text, refusingDuplicateKeys: true)
    }

    /// ``init(parsing:)`` for JSON whose values are to be stored exactly (SQL arguments): a number
    /// no `Int64` or `Double` holds exactly (`1e400`, `18446744073709551617`) is refused.
    /// - Throws: ``JSONInexactNumber`` naming the number and where it stands; what
    ///   ``init(parsing:)`` throws.
    public init(parsingExactly text: String) throws {
        try self.init(parsing: text, refusingDuplicateKeys: true, exactNumbers: true)
    }

    /// ``init(parsing:)``; for JSON Tandem wrote itself (CRUD entries, whose keys are distinct
    /// column names) a key twice is not searched for, even where the parser saw one.
    /// - Parameter keyPath: where `text` stands in a larger document (`[3]`, an element of a
    ///   payload), for the message naming the object that holds a key twice.
    /// - Parameter exactNumbers: refuse a number no `Int64` or `Double` holds exactly, throwing
    ///   ``JSONInexactNumber``, rather than take the nearest `Double`.
    init(parsing text: String, refusingDuplicateKeys: Bool, keyPath: String = "", exactNumbers: Bool = false) throws {
        var text = text
        var duplicateKey = false
        var inexact: JSONInexactNumber?
        let parsed = text.withUTF8 { bytes -> JSONValue? in
            var parser = JSONParser(bytes: bytes, exactNumbers: exactNumbers)
            defer {
                duplicateKey = parser.sawDuplicateKey
                inexact = parser.inexactNumber
            }
            return parser.document()
        }
        if let inexact { throw inexact }
        guard let parsed else { throw TandemError.invalidJSON("not valid JSON: \(text.prefix(200))") }
        if refusingDuplicateKeys, duplicateKey, let duplicate = JSONDuplicateKey.first(in: text, path: keyPath) { throw TandemError.invalidJSON(duplicate.description) }
        self = parsed
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int64.self) {
            self = .integer(i)
        } else if let d = try? c.decode(Double.self) {
            self = .double(d)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .integer(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// The value as compact JSON text with sorted keys; reals keep a fraction or an exponent
    /// (`2.0`), so that they read back as reals. A non-finite real, which JSON cannot hold, is `null`.
    public var jsonText: String {
        var text = JSONText()
        write(to: &text)
        return text.string
    }

    /// Writes the value's ``jsonText`` into `sink`, piece by piece.
    package func write<Sink: JSONTextSink>(to sink: inout Sink) {
        switch self {
        case .null: sink.append("null")
        case .bool(let b): sink.append(b ? "true" : "false")
        case .integer(let i): sink.append(String(i))
        case .double(let d): sink.append(JSONValue.realText(d) ?? "null")
        case .string(let s): JSONValue.writeString(s, to: &sink)
        case .array(let values):
            sink.append("[")
            for (index, value) in values.enumerated() {
                if index > 0 { sink.append(",") }
                value.write(to: &sink)
            }
            sink.append("]")
        case .object(let members):
            sink.append("{")
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { sink.append(",") }
                JSONValue.writeString(key, to: &sink)
                sink.append(":")
                members[key]!.write(to: &sink)
            }
            sink.append("}")
        }
    }

    /// A real as a JSON number that reads back as the same `Double`: Swift's shortest
    /// round-trip form, which always has a fraction or an exponent (`2.0`, `-0.0`, `1e-320`).
    /// Nil for infinities and NaN.
    static func realText(_ value: Double) -> String? {
        guard value.isFinite else { return nil }
        return value.description
    }

    /// A JSON string literal (RFC 8259): quotes, backslashes and control characters escaped.
    package static func writeString<Sink: JSONTextSink>(_ string: String, to sink: inout Sink) {
        sink.append("\"")
        // Most text needs no escape: appended whole.
        var string = string
        if !string.withUTF8({ $0.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5c || $0 == 0x7f }) }) {
            sink.append(string)
            sink.append("\"")
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": sink.append("\\\"")
            case "\\": sink.append("\\\\")
            case "\n": sink.append("\\n")
            case "\r": sink.append("\\r")
            case "\t": sink.append("\\t")
            case _ where scalar.value < 0x20 || scalar.value == 0x7f:
                sink.append("\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16))
            default: sink.append(scalar)
            }
        }
        sink.append("\"")
    }

    public var description: String { jsonText }

    /// The value bound as an SQLite value (objects and arrays as JSON text).
    public var databaseValue: DatabaseValue {
        switch self {
        case .null: return .null
        case .bool(let b): return .integer(b ? 1 : 0)
        case .integer(let i): return .integer(i)
        case .double(let d): return .real(d)
        case .string(let s): return .text(s)
        case .array, .object: return .text(jsonText)
        }
    }
}
