import Foundation

/// The declared tables of a Tandem database.
///
/// A synced table `notes` stores its rows as JSON in `ps_data__notes(id TEXT PRIMARY KEY, data TEXT)`;
/// `notes` itself is a view with INSTEAD OF triggers that write the data table and queue CRUD
/// entries. The layout is PowerSync's (https://docs.powersync.com/architecture/client-architecture).
///
/// ```swift
/// let schema = Schema(tables: [
///     TableSchema(name: "notes", columns: [.text("title"), .integer("done")],
///           indexes: [IndexSchema(name: "by_title", columns: ["title"])])
/// ])
/// ```
///
/// As JSON: `{"tables":[{"name":"notes","columns":[{"name":"title","type":"text"}],"indexes":[…],"localOnly":false,"insertOnly":false}]}`.
public struct Schema: Codable, Sendable, Equatable {
    /// The declared tables, each a view over its data table.
    public var tables: [TableSchema]

    /// A schema of `tables`; ``validate()`` checks it (opening a database does).
    public init(tables: [TableSchema]) { self.tables = tables }

    enum CodingKeys: String, CodingKey { case tables }

    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(["tables"], in: "the schema")
        tables = try decoder.container(keyedBy: CodingKeys.self).decode([TableSchema].self, forKey: .tables)
        try resolveScopes()
    }

    /// Decodes and validates a schema from JSON.
    /// - Throws: ``TandemError/invalidSchema(_:)`` naming the table and column at fault, or a key
    ///   given twice in one object.
    public init(json: Data) throws {
        if (try? JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])) != nil,
           let duplicate = JSONDuplicateKey.first(in: String(decoding: json, as: UTF8.self)) {
            throw TandemError.invalidSchema(duplicate.description)
        }
        do {
            self = try JSONDecoder().decode(Schema.self, from: json)
        } catch let error as DecodingError {
            throw TandemError.invalidSchema(Schema.describe(error))
        }
        try validate()
    }

    /// Reads a schema JSON file.
    /// - Throws: ``TandemError/invalidSchema(_:)`` naming the file.
    public init(contentsOf url: URL) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw TandemError.invalidSchema("cannot read schema file '\(url.path)': it does not exist")
        }
        guard !isDirectory.boolValue else {
            throw TandemError.invalidSchema("cannot read schema file '\(url.path)': it is a directory")
        }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw TandemError.invalidSchema("cannot read schema file '\(url.path)': permission denied or not readable")
        }
        do { try self.init(json: data) } catch TandemError.invalidSchema(let message) {
            throw TandemError.invalidSchema("\(url.path): \(message)")
        }
    }

    /// The schema as JSON (sorted keys).
    public func jsonData() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)) ?? Data("{}".utf8)
    }

    /// The table with this exact name, or nil.
    public func table(named name: String) -> TableSchema? { tables.first { $0.name == name } }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let p = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return p.isEmpty ? "the top level" : String(p.drop { $0 == "." })
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing key '\(key.stringValue)' at \(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(context.debugDescription) at \(path(context))"
        case .dataCorrupted(let context):
            if let underlying = context.underlyingError as NSError? {
                return "not valid JSON (\(underlying.userInfo[NSDebugDescriptionErrorKey] ?? underlying.localizedDescription))"
            }
            return "\(context.debugDescription) at \(path(context))"
        @unknown default: return "\(error)"
        }
    }
}

/// A synced, local-only or insert-only table.
public struct TableSchema: Codable, Sendable, Equatable {
    /// The table's name, which is also its view's name.
    public var name: String
    public var columns: [ColumnSchema]
    /// Expression indexes on the data table.
    public var indexes: [IndexSchema]
    /// Rows stay on this host: no CRUD entries, never synced. Stored in `ps_data_local__<name>`.
    public var localOnly: Bool
    /// Inserts are only queued for upload; no local row is kept, updates and deletes fail.
    public var insertOnly: Bool
    /// The scope its rows belong to for scoped sync (``TableScope``); nil for a global table.
    public var scope: TableScope?

    /// A table; `id TEXT` is implicit.
    public init(name: String, columns: [ColumnSchema], indexes: [IndexSchema] = [], localOnly: Bool = false, insertOnly: Bool = false,
                scope: TableScope? = nil) {
        self.name = name
        self.columns = columns
        self.indexes = indexes
        self.localOnly = localOnly
        self.insertOnly = insertOnly
        self.scope = scope
    }

    enum CodingKeys: String, CodingKey { case name, columns, indexes, localOnly, insertOnly, scope }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        try decoder.rejectUnknownKeys(["name", "columns", "indexes", "localOnly", "insertOnly", "scope"], in: "table '\(name)'")
        do {
            columns = try c.decode([ColumnSchema].self, forKey: .columns)
            indexes = try c.decodeIfPresent([IndexSchema].self, forKey: .indexes) ?? []
        } catch TandemError.invalidSchema(let message) {
            throw TandemError.invalidSchema("table '\(name)': \(message)")
        }
        localOnly = try c.decodeIfPresent(Bool.self, forKey: .localOnly) ?? false
        insertOnly = try c.decodeIfPresent(Bool.self, forKey: .insertOnly) ?? false
        do {
            scope = try c.decodeIfPresent(TableScope.self, forKey: .scope)
        } catch TandemError.invalidSchema(let message) {
            throw TandemError.invalidSchema("table '\(name)': \(message)")
        }
    }

    /// `ps_data__<name>`, or `ps_data_local__<name>` for a local-only table.
    public var dataTableName: String { InternalTables.dataTable(of: name, localOnly: localOnly) }
}

/// A column of a table. `id TEXT` is implicit and may not be declared.
public struct ColumnSchema: Codable, Sendable, Equatable {
    /// The column affinities Tandem declares; views `CAST` stored JSON values to them.
    public enum ColumnType: String, Codable, Sendable { case text, integer, real }

    /// The column's name.
    public var name: String
    public var type: ColumnType

    /// A column of `type`.
    public init(name: String, type: ColumnType) {
        self.name = name
        self.type = type
    }

    /// A `text` column.
    public static func text(_ name: String) -> ColumnSchema { ColumnSchema(name: name, type: .text) }
    /// An `integer` column.
    public static func integer(_ name: String) -> ColumnSchema { ColumnSchema(name: name, type: .integer) }
    /// A `real` column.
    public static func real(_ name: String) -> ColumnSchema { ColumnSchema(name: name, type: .real) }

    enum CodingKeys: String, CodingKey { case name, type }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        try decoder.rejectUnknownKeys(["name", "type"], in: "column '\(name)'")
        let raw = try c.decode(String.self, forKey: .type)
        guard let type = ColumnType(rawValue: raw.lowercased()) else {
            throw TandemError.invalidSchema("column '\(name)' has unknown type '\(raw)' (use text, integer or real)")
        }
        self.type = type
    }
}

/// An index over one or more columns, created as an expression index on the data table.
public struct IndexSchema: Codable, Sendable, Equatable {
    /// The index's name, unique within its table.
    public var name: String
    public var columns: [String]

    /// An index over `columns` (names of declared columns, or `id`), in order.
    public init(name: String, columns: [String]) {
        self.name = name
        self.columns = columns
    }

    enum CodingKeys: String, CodingKey { case name, columns }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        try decoder.rejectUnknownKeys(["name", "columns"], in: "index '\(name)'")
        columns = try c.decode([String].self, forKey: .columns)
    }
}
