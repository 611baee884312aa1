import Foundation

/// A type a stored value reads back as, by the same rule it binds by
/// (``DatabaseValueConvertible``) and records store it: one mapping, both directions. A `Date`
/// reads real (or integer) seconds since 1970, a `UUID` its text, `Data` base64 text (or a
/// BLOB of a table of your own), an integer type an integer it holds exactly (or a real with a
/// whole value), `Bool` 0 or 1. ``Row/decode(_:at:)`` and records use it alike.
///
/// GRDB's `DatabaseValueConvertible.fromDatabaseValue(_:)` is the model
/// (https://swiftpackageindex.com/groue/grdb.swift/documentation/grdb/databasevalueconvertible).
public protocol DatabaseValueDecodable {
    /// The value `stored` stands for, or nil when it stands for none of this type's values
    /// (NULL included).
    static func decode(from stored: DatabaseValue) -> Self?
    /// What a stored value of this type is, for messages: `seconds since 1970`, `a UUID`.
    static var storedForm: String { get }
}

extension DatabaseValue: DatabaseValueDecodable {
    public static func decode(from stored: DatabaseValue) -> DatabaseValue? { stored }
    public static var storedForm: String { "any value" }
}

extension String: DatabaseValueDecodable {
    public static func decode(from stored: DatabaseValue) -> String? {
        if case .text(let text) = stored { return text }
        return nil
    }
    public static var storedForm: String { "text" }
}

extension Bool: DatabaseValueDecodable {
    public static func decode(from stored: DatabaseValue) -> Bool? {
        if case .integer(let value) = stored, value == 0 || value == 1 { return value == 1 }
        return nil
    }
    public static var storedForm: String { "0 or 1" }
}

extension DatabaseValueDecodable where Self: FixedWidthInteger {
    public static func decode(from stored: DatabaseValue) -> Self? {
        switch stored {
        case .integer(let value): return Self(exactly: value)
        case .real(let value): return Self(exactly: value)
        default: return nil
        }
    }
    public static var storedForm: String { "an integer that fits \(Self.self)" }
}

extension Int: DatabaseValueDecodable {}
extension Int64: DatabaseValueDecodable {}
extension Int32: DatabaseValueDecodable {}
extension Int16: DatabaseValueDecodable {}
extension Int8: DatabaseValueDecodable {}
extension UInt: DatabaseValueDecodable {}
extension UInt64: DatabaseValueDecodable {}
extension UInt32: DatabaseValueDecodable {}
extension UInt16: DatabaseValueDecodable {}
extension UInt8: DatabaseValueDecodable {}

extension Double: DatabaseValueDecodable {
    public static func decode(from stored: DatabaseValue) -> Double? {
        switch stored {
        case .real(let value): return value
        case .integer(let value): return Double(value)
        default: return nil
        }
    }
    public static var storedForm: String { "a real" }
}

extension Float: DatabaseValueDecodable {
    public static func decode(from stored: DatabaseValue) -> Float? { Double.decode(from: stored).map(Float.init) }
    public static var storedForm: String { "a real" }
}

extension Date: DatabaseValueDecodable {
    public static func decode(from stored: DatabaseValue) -> Date? { Double.decode(from: stored).map(Date.init(timeIntervalSince1970:)) }
    public static var storedForm: String { "seconds since 1970" }
}

extension UUID: DatabaseValueDecodable {
    public static func decode(from stored: DatabaseValue) -> UUID? { String.decode(from: stored).flatMap(UUID.init(uuidString:)) }
    public static var storedForm: String { "a UUID" }
}

extension Data: DatabaseValueDecodable {
    public static func decode(from stored: DatabaseValue) -> Data? {
        switch stored {
        case .text(let text): return Data(base64Encoded: text)
        case .blob(let bytes): return bytes
        default: return nil
        }
    }
    public static var storedForm: String { "base64 text" }
}

extension URL: DatabaseValueDecodable {
    public static func decode(from stored: DatabaseValue) -> URL? { String.decode(from: stored).flatMap { URL(string: $0) } }
    public static var storedForm: String { "a URL" }
}
