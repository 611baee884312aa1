import Foundation

/// Decodes a record from a row, values mapped back by ``RecordValue``'s table. A NULL or missing
/// column for a non-optional property reads the ``DefaultedRecord`` default, or else throws
/// ``TandemError/invalidRecord(_:)`` naming the type, the property and the row. A to-one
/// relationship reads the record `related` holds for its id.
struct RecordDecoder: Decoder {
    let values: [String: DatabaseValue]
    let layout: RecordLayout
    /// Relationship property → related id → the related record.
    let related: [String: [ExactText: any Record]]
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var typeName: String { layout.typeName }

    static func decode<R: Record>(
        _ type: R.Type, from row: Row, layout: RecordLayout,
        related: [String: [ExactText: any Record]] = [:]
    ) throws -> R {
        var values: [String: DatabaseValue] = [:]
        for (column, value) in zip(row.columns, row.values) { values[column] = value }
        return try R(from: RecordDecoder(values: values, layout: layout, related: related))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Columns<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw TandemError.invalidRecord("\(typeName) must decode as an object with one key per column")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw TandemError.invalidRecord("\(typeName) must decode as an object with one key per column")
    }

    private struct Columns<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: RecordDecoder
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { decoder.values.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { decoder.values[key.stringValue] != nil }

        func decodeNil(forKey key: Key) throws -> Bool { (decoder.values[key.stringValue] ?? .null).isNull }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            if type is any Record.Type {
                guard let id = decoder.values[key.stringValue + "_id"]?.stringValue else { return nil }
                return decoder.related[key.stringValue]?[ExactText(id)] as? T
            }
            guard let value = decoder.values[key.stringValue], !value.isNull else { return nil }
            return try decode(type, forKey: key)
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            var value = decoder.values[key.stringValue] ?? .null
            let row = decoder.values["id"]?.stringValue.map { " (row '\($0)')" } ?? ""
            if value.isNull, let fallback = decoder.layout.defaults[key.stringValue] { value = fallback }
            guard !value.isNull else {
                throw TandemError.invalidRecord(
                    "\(decoder.typeName).\(key.stringValue) is NULL or missing\(row) but the property is not optional; make it optional, give it a default in a DefaultedRecord, or store a value"
                )
            }
            do {
                return try ColumnValueDecoder.decode(type, from: value)
            } catch {
                let id = decoder.values["id"]?.stringValue
                let place = "table \(decoder.layout.tableName), column \(key.stringValue)" + (id.map { ", row '\($0)'" } ?? "")
                throw TandemError.invalidValue(
                    ValueRefusal(
                        table: decoder.layout.tableName, column: key.stringValue, rowID: id,
                        message: "\(decoder.typeName).\(key.stringValue) (\(place)): \(RecordValue.reason(error))"))
            }
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            throw TandemError.invalidRecord("\(decoder.typeName).\(key.stringValue): nested containers are not columns")
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw TandemError.invalidRecord("\(decoder.typeName).\(key.stringValue): nested containers are not columns")
        }

        func superDecoder() throws -> any Decoder { decoder }
        func superDecoder(forKey key: Key) throws -> any Decoder { decoder }
    }
}

/// One column value decoded as a Swift type (the reverse of ``RecordValue/databaseValue(_:)``).
struct ColumnValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: DatabaseValue
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    static func decode<T: Decodable>(_ type: T.Type, from value: DatabaseValue) throws -> T {
        try ColumnValueDecoder(value: value).decodeValue(type)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw TandemError.invalidRecord("a column holds one value, not an object")
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw TandemError.invalidRecord("a column holds one value, not a list")
    }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { value.isNull }

    private func mismatch(_ expected: String) -> TandemError {
        .invalidRecord("expected \(expected), found \(value.shownWithKind)")
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(type) }

    private func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        // Strings, numbers, dates, UUIDs, bytes and URLs read as they bind (one mapping).
        if let readable = type as? any DatabaseValueDecodable.Type {
            guard let decoded = readable.decode(from: value) else { throw mismatch(readable.storedForm) }
            return decoded as! T
        }
        switch type {
        case is any RawRepresentable.Type:
            do { return try T(from: self) } catch is DecodingError {
                throw TandemError.invalidRecord("\(value.isNull ? "NULL" : SQLText.literal(value.description)) is not a raw value of \(T.self)\(Self.rawValues(of: T.self))")
            }
        default:
            guard case .text(let json) = value else { throw mismatch("JSON text") }
            do { return try RecordValue.jsonDecoder.decode(T.self, from: Data(json.utf8)) } catch {
                throw TandemError.invalidRecord("the JSON text does not decode as \(T.self): \(error)")
            }
        }
    }

    /// ` (its raw values: a, b, c)` for a `CaseIterable` type, else nothing.
    private static func rawValues(of type: Any.Type) -> String {
        guard let cases = (type as? any CaseIterable.Type)?.allCasesAsAny else { return "" }
        let raws = cases.prefix(20).compactMap { ($0 as? any RawRepresentable).map { "\($0.rawValue)" } }
        return " (its raw values: \(raws.joined(separator: ", "))\(cases.count > 20 ? ", …" : ""))"
    }

    func decode(_ type: Bool.Type) throws -> Bool { try decodeValue(type) }
    func decode(_ type: String.Type) throws -> String { try decodeValue(type) }
    func decode(_ type: Double.Type) throws -> Double { try decodeValue(type) }
    func decode(_ type: Float.Type) throws -> Float { try decodeValue(type) }
    func decode(_ type: Int.Type) throws -> Int { try decodeValue(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decodeValue(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decodeValue(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decodeValue(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decodeValue(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try decodeValue(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeValue(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeValue(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeValue(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeValue(type) }
}
