import Foundation

/// A value stored in or bound to an SQLite column.
///
/// The cases follow SQLite's five storage classes
/// (Related SQLite documentation: https://www.sqlite.org/datatype3.html).
public enum DatabaseValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// The text value, or the textual form of an integer or real; `nil` for NULL and blobs.
    public var stringValue: String? {
        switch self {
        case .text(let s): return s
        case .integer(let i): return String(i)
        case .real(let d): return String(d)
        case .null, .blob: return nil
        }
    }

    /// The integer value, or a real truncated toward zero, or text parsed as an integer.
    public var int64Value: Int64? {
        switch self {
        case .integer(let i): return i
        case .real(let d): return d.isFinite ? Int64(exactly: d.rounded(.towardZero)) : nil
        case .text(let s): return Int64(s)
        case .null, .blob: return nil
        }
    }

    /// The real value, or an integer widened to a real.
    public var doubleValue: Double? {
        switch self {
        case .real(let d): return d
        case .integer(let i): return Double(i)
        case .text(let s): return Double(s)
        case .null, .blob: return nil
        }
    }

    /// True for SQL NULL.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The value with its storage class, for messages: `300 (integer)`, `'x' (text)` (its first
    /// 100 characters), `NULL`.
    var shownWithKind: String {
        switch self {
        case .null: "NULL"
        case .integer: "\(self) (integer)"
        case .real: "\(self) (real)"
        case .text(let text): "\(SQLText.literal(String(text.prefix(100)))) (text)"
        case .blob: "\(self) (blob)"
        }
    }

    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let i): return String(i)
        case .real(let d): return String(d)
        case .text(let s): return s
        case .blob(let d): return "<\(d.count) bytes>"
        }
    }

    /// The value as a JSON-compatible Foundation object (`NSNull`, `Int64`, `Double`, `String`,
    /// or a base64 `String` for blobs), for `JSONSerialization`.
    public var jsonObject: Any {
        switch self {
        case .null: return NSNull()
        case .integer(let i): return i
        case .real(let d): return d
        case .text(let s): return s
        case .blob(let d): return d.base64EncodedString()
        }
    }
}

/// A type that can be bound to a statement parameter.
public protocol DatabaseValueConvertible: Sendable {
    var databaseValue: DatabaseValue { get }
}

extension DatabaseValue: DatabaseValueConvertible {
    /// The value itself.
    public var databaseValue: DatabaseValue { self }
}
extension String: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .text(self) }
}
extension Int: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
}
extension Int64: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .integer(self) }
}
extension Int32: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
}
extension Double: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .real(self) }
}
extension Bool: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }
}
/// Bytes bind as base64 text, as records store `Data` (Tandem's tables take no BLOB); bind
/// ``DatabaseValue/blob(_:)`` for a BLOB in a table of your own.
extension Data: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .text(base64EncodedString()) }
}
/// A date binds as records store it: real seconds since 1970 (what `Date(timeIntervalSince1970:)`
/// reads back, and PostgreSQL's `to_timestamp` takes).
extension Date: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .real(timeIntervalSince1970) }
}
/// A UUID binds as records store it: lowercase text (RFC 9562's form).
extension UUID: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .text(uuidString.lowercased()) }
}
extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { self?.databaseValue ?? .null }
}
