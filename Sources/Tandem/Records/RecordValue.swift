import Foundation

/// The one place that maps Swift values to SQLite values and back for records (the type table
/// on ``Record``).
enum RecordValue {
    static let jsonEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    static let jsonDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// The column type a Swift type is stored as.
    static func columnType(of type: Any.Type) -> ColumnSchema.ColumnType {
        switch type {
        case is String.Type, is UUID.Type, is Data.Type: return .text
        case is Bool.Type, is Int.Type, is Int64.Type, is Int32.Type, is Int16.Type, is Int8.Type,
             is UInt.Type, is UInt64.Type, is UInt32.Type, is UInt16.Type, is UInt8.Type: return .integer
        case is Double.Type, is Float.Type, is Date.Type: return .real
        default: return .text
        }
    }

    /// A value as SQLite stores it.
    static func databaseValue(_ value: any Encodable) throws -> DatabaseValue {
        switch value {
        case let v as String: return .text(v)
        case let v as Bool: return .integer(v ? 1 : 0)
        case let v as Int: return .integer(Int64(v))
        case let v as Int64: return .integer(v)
        case let v as Int32: return .integer(Int64(v))
        case let v as Int16: return .integer(Int64(v))
        case let v as Int8: return .integer(Int64(v))
        case let v as UInt: return try exactInteger(v)
        case let v as UInt64: return try exactInteger(v)
        case let v as UInt32: return .integer(Int64(v))
        case let v as UInt16: return .integer(Int64(v))
        case let v as UInt8: return .integer(Int64(v))
        case let v as Double: return .real(v)
        case let v as Float: return .real(Double(v))
        case let v as Date: return .real(v.timeIntervalSince1970)
        case let v as UUID: return .text(v.uuidString.lowercased())
        case let v as Data: return .text(v.base64EncodedString())
        case let v as any RawRepresentable:
            guard let raw = v.rawValue as? any Encodable else { return .text("\(v.rawValue)") }
            return try databaseValue(raw)
        default:
            return .text(String(decoding: try jsonEncoder.encode(value), as: UTF8.self))
        }
    }

    private static func exactInteger<I: BinaryInteger>(_ value: I) throws -> DatabaseValue {
        guard let exact = Int64(exactly: value) else {
            throw TandemError.invalidRecord("\(value) does not fit a 64-bit integer column")
        }
        return .integer(exact)
    }
}
