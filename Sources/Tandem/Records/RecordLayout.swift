import Foundation
import Synchronization

/// What a record type looks like as a table, derived once per type from its Codable
/// conformance (no instance needed): the table name, the columns with their types and
/// nullability, and the map from key-path property names to columns.
struct RecordLayout: Sendable {
    struct Column: Sendable, Equatable {
        var name: String
        var type: ColumnSchema.ColumnType
        var nullable: Bool
    }

    /// A to-one relationship: an optional property whose type is another record (`folder:
    /// Folder?`), stored as the id in the text column `{property}_id` (`folder_id`).
    struct Relation: @unchecked Sendable {
        // @unchecked: `target` is a metatype, an immutable value.
        let property: String
        let column: String
        let target: any Record.Type
    }

    let typeName: String
    let tableName: String
    /// The columns besides `id`, in Codable order.
    let columns: [Column]
    /// Property name (from a key path) → column, for the names that differ.
    let keyPathColumns: [String: String]
    /// The to-one relationships, in Codable order.
    let relations: [Relation]
    /// `\R.id` as generic code spells it (described as a computed property, not by name).
    let idKeyPath: AnyKeyPath & Sendable
    /// Column values of a ``DefaultedRecord``'s `init()`, read for a NULL or missing value of a
    /// non-optional property; empty for other records.
    let defaults: [String: DatabaseValue]

    private static let cache = Mutex<[ObjectIdentifier: RecordLayout]>([:])

    /// The layout of `R`, derived at first use.
    /// - Throws: ``TandemError/invalidRecord(_:)`` when `R` does not decode as one object of columns.
    static func of<R: Record>(_ type: R.Type) throws -> RecordLayout {
        if let known = cache.withLock({ $0[ObjectIdentifier(type)] }) { return known }
        let recorder = PlaceholderDecoder(depth: 0)
        do {
            _ = try R(from: recorder)
        } catch let failure as PlaceholderDecoder.PropertyFailure {
            throw TandemError.invalidRecord("\(R.self).\(failure.key): \(failure.type) cannot be laid out as a column: \(failure.reason)")
        } catch {
            throw TandemError.invalidRecord("\(R.self) cannot be laid out as a table: \(PlaceholderDecoder.reason(error))")
        }
        let columns = recorder.recorded.columns.filter { $0.name != "id" }
        guard recorder.recorded.columns.contains(where: { $0.name == "id" }) else {
            throw TandemError.invalidRecord("\(R.self) has no Codable key 'id' (a record's id is its row id)")
        }
        let relations = try recorder.recorded.relations.map { property, target in
            let column = property + "_id"
            guard columns.contains(where: { $0.name == column && $0.type == .text }) else {
                throw TandemError.invalidRecord(
                    "\(R.self).\(property) is a to-one relationship to \(target), stored as its id in the text column \(column); declare `var \(column): String?` in \(R.self)")
            }
            return Relation(property: property, column: column, target: target)
        }
        var defaults: [String: DatabaseValue] = [:]
        if let defaulted = R.self as? any DefaultedRecord.Type {
            defaults = try RecordEncoder.columns(of: defaulted.init())
        }
        let layout = RecordLayout(
            typeName: String(describing: R.self), tableName: R.tableName, columns: columns,
            keyPathColumns: R.keyPathColumns, relations: relations, idKeyPath: \R.id, defaults: defaults)
        cache.withLock { $0[ObjectIdentifier(type)] = layout }
        return layout
    }

    /// The column a key path names: the property after the type name in its description
    /// (`\TodoItem.title` → `title`), mapped by ``Record/keyPathColumns``, which must be a column.
    /// - Throws: ``TandemError/invalidRecord(_:)`` naming the type and property, for a property that
    ///   is not a column or a key path through another value (those are evaluated in Swift).
    func column(for keyPath: AnyKeyPath) throws -> String {
        if keyPath == idKeyPath { return "id" }
        let property = try self.property(of: keyPath)
        let column = keyPathColumns[property] ?? property
        guard column == "id" || columns.contains(where: { $0.name == column }) else {
            throw TandemError.invalidRecord(
                "\(typeName).\(property) is not a column of \(tableName) (its Codable keys are id, \(columns.map(\.name).joined(separator: ", "))); map it in \(typeName).keyPathColumns"
            )
        }
        return column
    }

    /// The property a key path names: what follows the type name in its description.
    func property(of keyPath: AnyKeyPath) throws -> String {
        let description = String(reflecting: keyPath)
        let prefix = "\\\(typeName)."
        guard description.hasPrefix(prefix) else {
            throw TandemError.invalidRecord("the key path \(description) does not start at \(typeName)")
        }
        return String(description.dropFirst(prefix.count))
    }

    /// The to-one relationship a key path names (`\Note.folder`), if any.
    func relation(for keyPath: AnyKeyPath) -> Relation? {
        guard let property = try? property(of: keyPath) else { return nil }
        return relation(named: property)
    }

    /// The to-one relationship of a property name (its Codable key, or mapped by ``Record/keyPathColumns``).
    func relation(named property: String) -> Relation? {
        let key = keyPathColumns[property] ?? property
        return relations.first { $0.property == key }
    }

    /// The column's value as records read it: a non-optional column of a ``DefaultedRecord``
    /// reads its default where the row holds NULL (`coalesce(column, default)`).
    func readExpression(of column: String, qualifiedBy alias: String?) -> SQLFragment {
        let reference = (alias.map { $0 + "." } ?? "") + SQLText.identifier(column)
        guard let fallback = defaults[column], !fallback.isNull,
            columns.contains(where: { $0.name == column && !$0.nullable })
        else { return SQLFragment(text: reference) }
        return SQLFragment(text: "coalesce(\(reference), ?)", arguments: [fallback])
    }

    /// Fails fast, naming the type, property and column, when the file's declared table does
    /// not match this record type.
    func check(against schema: Schema?, path: String) throws {
        guard let table = schema?.table(named: tableName) else {
            throw TandemError.invalidRecord(
                "\(typeName) is stored in table \(tableName), which '\(path)' does not declare; open it with a schema that has \(typeName) (Schema(records:))")
        }
        for column in columns {
            guard let declared = table.columns.first(where: { $0.name == column.name }) else {
                throw TandemError.invalidRecord("\(typeName).\(column.name) has no column in table \(tableName) of '\(path)'; upgrade the schema to declare it")
            }
            guard declared.type == column.type else {
                throw TandemError.invalidRecord(
                    "\(typeName).\(column.name) maps to a \(column.type.rawValue) column, but \(tableName).\(column.name) in '\(path)' is declared \(declared.type.rawValue)")
            }
        }
    }

    /// The table as a schema declares it.
    var tableSchema: TableSchema {
        TableSchema(name: tableName, columns: columns.map { ColumnSchema(name: $0.name, type: $0.type) })
    }
}

/// A decoder that makes a placeholder value of any Codable struct and records, at the top
/// level, each key with the type asked for it and whether it was optional.
final class PlaceholderDecoder: Decoder {
    final class Recorded {
        var columns: [RecordLayout.Column] = []
        /// Optional properties whose type is a record: to-one relationships, not columns.
        var relations: [(property: String, target: any Record.Type)] = []
    }

    /// A property's type that could not be laid out, and why.
    struct PropertyFailure: Error {
        let key: String
        let type: Any.Type
        let reason: String
    }

    /// Values nest at most this deep (a type that contains itself through a non-optional value
    /// could not be made at all).
    static let maximumDepth = 32

    /// An error of a type's own `init(from:)` while laid out, said briefly.
    static func reason(_ error: any Error) -> String {
        if error is TandemError { return RecordValue.reason(error) }
        return "its init(from:) failed on a placeholder value: \(RecordValue.reason(error))"
    }

    let depth: Int
    let recorded = Recorded()
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]

    init(depth: Int) { self.depth = depth }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keys<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { EmptyList() }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(decoder: self) }

    /// A placeholder of `type`: zero, empty, the first case of an enum.
    func placeholder<T: Decodable>(_ type: T.Type) throws -> T {
        switch type {
        case is String.Type: return "" as! T
        case is Bool.Type: return false as! T
        case is Int.Type: return 0 as! T
        case is Int64.Type: return Int64(0) as! T
        case is Int32.Type: return Int32(0) as! T
        case is Int16.Type: return Int16(0) as! T
        case is Int8.Type: return Int8(0) as! T
        case is UInt.Type: return UInt(0) as! T
        case is UInt64.Type: return UInt64(0) as! T
        case is UInt32.Type: return UInt32(0) as! T
        case is UInt16.Type: return UInt16(0) as! T
        case is UInt8.Type: return UInt8(0) as! T
        case is Double.Type: return 0.0 as! T
        case is Float.Type: return Float(0) as! T
        case is Date.Type: return Date(timeIntervalSince1970: 0) as! T
        case is UUID.Type: return UUID() as! T
        case is Data.Type: return Data() as! T
        case is URL.Type: return URL(string: "about:blank")! as! T
        case is Decimal.Type: return Decimal() as! T
        default:
            guard depth < Self.maximumDepth else {
                throw TandemError.invalidRecord("\(T.self) nests values more than \(Self.maximumDepth) levels deep (a type that contains itself?)")
            }
            if let iterable = type as? any CaseIterable.Type {
                guard let first = iterable.firstCase as? T else {
                    throw TandemError.invalidRecord("\(T.self) has no cases; a record property needs a type with values")
                }
                return first
            }
            do {
                return try T(from: PlaceholderDecoder(depth: depth + 1))
            } catch  where type is any RawRepresentable.Type {
                throw TandemError.invalidRecord("\(T.self) must be CaseIterable, so that Tandem can lay out the records that use it")
            }
        }
    }

    /// The column type of `type`: a RawRepresentable enum's raw value type, else the mapping's.
    func columnType<T: Decodable>(_ type: T.Type, placeholder: T) -> ColumnSchema.ColumnType {
        if let raw = (placeholder as? any RawRepresentable)?.rawValue { return RecordValue.columnType(of: Swift.type(of: raw)) }
        return RecordValue.columnType(of: type)
    }

    private struct Keys<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: PlaceholderDecoder
        var codingPath: [any CodingKey] { [] }
        /// One key, for an enum with associated values, whose synthesized `init(from:)` asks
        /// which case the container holds: the first case of its `CodingKeys`, an enum without
        /// payloads (trivial, of at most one byte, its first case all zero bits). Other key types
        /// list no key.
        var allKeys: [Key] {
            guard _isPOD(Key.self), MemoryLayout<Key>.size <= 1 else { return [] }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1) { buffer in
                buffer[0] = 0
                return [UnsafeRawPointer(buffer.baseAddress!).load(as: Key.self)]
            }
        }
        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool { false }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            if decoder.depth == 0, type is any Record.Type {
                throw TandemError.invalidRecord("'\(key.stringValue)' is a to-one relationship to \(T.self) and must be optional (`\(key.stringValue): \(T.self)?`)")
            }
            return try record(type, key: key, nullable: false)
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            if decoder.depth == 0, let target = type as? any Record.Type {
                decoder.recorded.relations.append((key.stringValue, target))
                return nil
            }
            // Inside a value only the value is needed, and nil ends a type that holds itself (`URL.baseURL`).
            if decoder.depth > 0 { return nil }
            return try record(type, key: key, nullable: true)
        }

        private func record<T: Decodable>(_ type: T.Type, key: Key, nullable: Bool) throws -> T {
            let value: T
            do {
                value = try decoder.placeholder(type)
            } catch  where decoder.depth == 0 {
                throw PropertyFailure(key: key.stringValue, type: T.self, reason: PlaceholderDecoder.reason(error))
            }
            if decoder.depth == 0 {
                decoder.recorded.columns.append(RecordLayout.Column(name: key.stringValue, type: decoder.columnType(type, placeholder: value), nullable: nullable))
            }
            return value
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            KeyedDecodingContainer(PlaceholderDecoder.Keys<NestedKey>(decoder: PlaceholderDecoder(depth: decoder.depth + 1)))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { EmptyList() }
        func superDecoder() throws -> any Decoder { PlaceholderDecoder(depth: decoder.depth + 1) }
        func superDecoder(forKey key: Key) throws -> any Decoder { PlaceholderDecoder(depth: decoder.depth + 1) }
    }

    private struct Single: SingleValueDecodingContainer {
        let decoder: PlaceholderDecoder
        var codingPath: [any CodingKey] { [] }
        func decodeNil() -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.placeholder(type) }
    }

    private struct EmptyList: UnkeyedDecodingContainer {
        var codingPath: [any CodingKey] { [] }
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }
        mutating func decodeNil() throws -> Bool { false }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            throw DecodingError.valueNotFound(type, .init(codingPath: [], debugDescription: "empty list"))
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            throw DecodingError.valueNotFound(type, .init(codingPath: [], debugDescription: "empty list"))
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { EmptyList() }
        mutating func superDecoder() throws -> any Decoder { PlaceholderDecoder(depth: 1) }
    }
}

extension RecordLayout {
    /// `TodoItem` → `todo_item`, `URLRequest` → `url_request`.
    static func snakeCase(_ name: String) -> String {
        var result = ""
        let characters = Array(name)
        for (index, character) in characters.enumerated() {
            if character.isUppercase {
                let previous = index > 0 ? characters[index - 1] : nil
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                if let previous, previous.isLowercase || previous.isNumber || (previous.isUppercase && (next?.isLowercase ?? false)) {
                    result.append("_")
                }
                result.append(contentsOf: character.lowercased())
            } else {
                result.append(character)
            }
        }
        return result
    }
}

extension CaseIterable {
    /// The first case, as `Any` (callable on an existential metatype).
    static var firstCase: Any? { allCases.first }
}
