import Foundation

/// Encodes a record into its columns (`[column: value]`, `id` included), values mapped by
/// ``RecordValue``. Properties that encode nothing (a nil optional) are absent: the caller
/// fills NULL for every declared column that is missing.
final class RecordEncoder: Encoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]
    fileprivate(set) var columns: [String: DatabaseValue] = [:]
    fileprivate var failure: Error?
    /// The record type, for errors.
    fileprivate var typeName = ""

    /// - Throws: ``TandemError/invalidRecord(_:)`` naming the type and property of a value that
    ///   does not encode as its column (a NaN inside a JSON value, an integer past 64 bits).
    static func columns<R: Record>(of record: R) throws -> [String: DatabaseValue] {
        let encoder = RecordEncoder()
        encoder.typeName = String(describing: R.self)
        try record.encode(to: encoder)
        if let failure = encoder.failure { throw failure }
        return encoder.columns
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Columns<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        failure = failure ?? TandemError.invalidRecord("a record must encode as an object with one key per column")
        return DroppingContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        failure = failure ?? TandemError.invalidRecord("a record must encode as an object with one key per column")
        return DroppingContainer()
    }

    private struct Columns<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: RecordEncoder
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws { encoder.columns[key.stringValue] = .null }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            if value is any Record { return }  // a to-one relationship: its `…_id` column holds it
            do {
                encoder.columns[key.stringValue] = try RecordValue.databaseValue(value)
            } catch {
                throw TandemError.invalidRecord("\(encoder.typeName).\(key.stringValue): \(RecordValue.reason(error))")
            }
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            encoder.failure = encoder.failure ?? TandemError.invalidRecord("'\(key.stringValue)': nested containers are not columns; give the property a Codable type")
            return RecordEncoder().container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            encoder.failure = encoder.failure ?? TandemError.invalidRecord("'\(key.stringValue)': nested containers are not columns; give the property a Codable type")
            return RecordEncoder().unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder { encoder }
        mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
    }
}

/// A container that accepts and drops values, for an encoder that already recorded a failure.
private struct DroppingContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        RecordEncoder().container(keyedBy: keyType)
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { DroppingContainer() }
    mutating func superEncoder() -> any Encoder { RecordEncoder() }
}
