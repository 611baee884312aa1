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
/// As JSON: `{"tables":[{"name":"notes","columns":[{"name":"title","type":"text"}],"indexes":[…],"localOnly":false,"insertOnly":false}],
/// "migrations":[…]}` (``Migration``; the list may be left out).
public struct Schema: Codable, Sendable, Equatable {
    /// The declared tables, each a view over its data table.
    public var tables: [TableSchema]
    /// The migrations that bring a file stored by an earlier declaration to these tables, in
    /// the order they run (``Migration``). Only ever appended to between versions of a program.
    public var migrations: [Migration]

    /// A schema of `tables`, reached by `migrations`; ``validate()`` checks it (opening a database does).
    public init(tables: [TableSchema], migrations: [Migration] = []) {
        self.tables = tables
        self.migrations = migrations
    }

    enum CodingKeys: String, CodingKey { case tables, migrations }

    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(["tables", "migrations"], in: "the schema")
        let c = try decoder.container(keyedBy: CodingKeys.self)
        tables = try c.decode([TableSchema].self, forKey: .tables)
        migrations = try c.decodeIfPresent([Migration].self, forKey: .migrations) ?? []
        try resolveScopes()
    }

    /// Encodes `tables`, and `migrations` when there are any.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(tables, forKey: .tables)
        if !migrations.isEmpty { try c.encode(migrations, forKey: .migrations) }
    }

    /// The schema as JSON (sorted keys). A ``Migration/Step/swift(name:run:)`` step has no JSON
    /// form: a schema with one gives its tables only.
    public func jsonData() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)) ?? (try? encoder.encode(Schema(tables: tables))) ?? Data("{}".utf8)
    }

    /// The table with this exact name, or nil.
    public func table(named name: String) -> TableSchema? { tables.first { $0.name == name } }
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
    /// Its full-text search index (``SearchIndex``); nil: none.
    public var search: SearchIndex?

    /// A table; `id TEXT` is implicit.
    public init(
        name: String, columns: [ColumnSchema], indexes: [IndexSchema] = [], localOnly: Bool = false, insertOnly: Bool = false,
        scope: TableScope? = nil, search: SearchIndex? = nil
    ) {
        self.name = name
        self.columns = columns
        self.indexes = indexes
        self.localOnly = localOnly
        self.insertOnly = insertOnly
        self.scope = scope
        self.search = search
    }

    enum CodingKeys: String, CodingKey { case name, columns, indexes, localOnly, insertOnly, scope, search }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        try decoder.rejectUnknownKeys(["name", "columns", "indexes", "localOnly", "insertOnly", "scope", "search"], in: "table '\(name)'", table: name)
        do {
            columns = try c.decode([ColumnSchema].self, forKey: .columns)
            indexes = try c.decodeIfPresent([IndexSchema].self, forKey: .indexes) ?? []
        } catch TandemError.invalidSchema(let problem) {
            throw TandemError.invalidSchema(problem.within("table '\(name)'", table: name))
        }
        localOnly = try c.decodeIfPresent(Bool.self, forKey: .localOnly) ?? false
        insertOnly = try c.decodeIfPresent(Bool.self, forKey: .insertOnly) ?? false
        do {
            scope = try c.decodeIfPresent(TableScope.self, forKey: .scope)
            search = try c.decodeIfPresent(SearchIndex.self, forKey: .search)
        } catch TandemError.invalidSchema(let problem) {
            throw TandemError.invalidSchema(problem.within("table '\(name)'", table: name))
        }
    }
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
        try decoder.rejectUnknownKeys(["name", "type"], in: "column '\(name)'", column: name)
        let raw = try c.decode(String.self, forKey: .type)
        guard let type = ColumnType(rawValue: raw.lowercased()) else {
            throw TandemError.invalidSchema(SchemaProblem(.unknownType, column: name, "column '\(name)' has unknown type '\(raw)' (use text, integer or real)"))
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
