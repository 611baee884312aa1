import Foundation

/// The one place that maps Swift values to SQLite values and back for records (the type table
/// on ``Record``). `Date`s inside a JSON text column are ISO 8601 text in UTC with as many
/// fraction digits as the value needs to read back exactly (``ISO8601Timestamp``).
enum RecordValue {
    static let jsonEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            guard let text = ISO8601Timestamp.string(secondsSince1970: date.timeIntervalSince1970) else {
                throw EncodingError.invalidValue(
                    date,
                    EncodingError.Context(
                        codingPath: encoder.codingPath, debugDescription: "\(date) is outside the years 0000–9999 that ISO 8601 text holds"))
            }
            var container = encoder.singleValueContainer()
            try container.encode(text)
        }
        return encoder
    }()

    static let jsonDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            do throws(ISO8601Timestamp.Refusal) {
                return Date(timeIntervalSince1970: try ISO8601Timestamp.secondsSince1970(text))
            } catch {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not an ISO 8601 date: \(error.reason)")
            }
        }
        return decoder
    }()

    /// The column type a Swift type is stored as.
    static func columnType(of type: Any.Type) -> ColumnSchema.ColumnType {
        switch type {
        case is String.Type, is UUID.Type, is Data.Type, is URL.Type: return .text
        case is Bool.Type, is Int.Type, is Int64.Type, is Int32.Type, is Int16.Type, is Int8.Type,
            is UInt.Type, is UInt64.Type, is UInt32.Type, is UInt16.Type, is UInt8.Type:
            return .integer
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
        case let v as Date: return v.databaseValue
        case let v as UUID: return v.databaseValue
        case let v as Data: return v.databaseValue
        case let v as URL: return .text(v.absoluteString)
        case let v as any RawRepresentable:
            guard let raw = v.rawValue as? any Encodable else { return .text("\(v.rawValue)") }
            return try databaseValue(raw)
        default:
            return .text(String(decoding: try jsonEncoder.encode(value), as: UTF8.self))
        }
    }

    /// An error of Codable or of the mapping, said briefly: where in the value, and why.
    static func reason(_ error: any Error) -> String {
        switch error {
        case let error as TandemError:
            return error.description.replacingOccurrences(of: "invalid record: ", with: "")
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.keyNotFound(_, let context), DecodingError.dataCorrupted(let context):
            return described(context.debugDescription, at: context.codingPath)
        case EncodingError.invalidValue(_, let context):
            return described(context.debugDescription, at: context.codingPath)
        default:
            return "\(error)"
        }
    }

    private static func described(_ text: String, at path: [any CodingKey]) -> String {
        let path = path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        return path.isEmpty ? text : "at \(path): \(text)"
    }

    private static func exactInteger<I: BinaryInteger>(_ value: I) throws -> DatabaseValue {
        guard let exact = Int64(exactly: value) else {
            throw TandemError.invalidRecord("\(value) does not fit a 64-bit integer column")
        }
        return .integer(exact)
    }
}
