/// A record type's table in a schema derived from records, with its options.
public struct RecordTable: Sendable {
    let table: @Sendable () throws -> TableSchema

    /// `R`'s table: a column per Codable key (`id` implicit), typed by the record mapping; an
    /// index on every to-one reference column (`…_id`) besides `indexes`; `scope` for scoped
    /// sync through PostgreSQL (``TableScope``: a column, or a parent record type's table);
    /// `search`, a full-text search index of text properties (``SearchIndex``).
    public init<R: Record>(
        _ type: R.Type, localOnly: Bool = false, insertOnly: Bool = false, indexes: [IndexSchema] = [],
        scope: TableScope? = nil, search: SearchIndex? = nil
    ) {
        table = {
            var table = try RecordLayout.of(R.self).tableSchema
            table.localOnly = localOnly
            table.insertOnly = insertOnly
            table.scope = scope
            table.search = search
            let references = table.columns.map(\.name).filter { $0.hasSuffix("_id") || ($0.hasSuffix("ID") && $0.count > 2) }
            table.indexes =
                indexes
                + references.filter { name in !indexes.contains { $0.columns == [name] } }
                .map { IndexSchema(name: "by_\($0)", columns: [$0]) }
            return table
        }
    }
}

extension Schema {
    /// A schema of record types' tables.
    ///
    /// ```swift
    /// let schema = try Schema(records: [RecordTable(TodoItem.self), RecordTable(Folder.self, localOnly: true)])
    /// ```
    /// - Throws: ``TandemError/invalidRecord(_:)`` for a type that cannot be laid out as a table;
    ///   ``TandemError/invalidSchema(_:)`` for a name the schema rules refuse.
    public init(records: [RecordTable]) throws {
        self.init(tables: try records.map { try $0.table() })
        try validate()
        self = try resolvingScopes()
    }
}

extension SharedDatabase {
    /// Opens (and creates, or upgrades) a database whose tables are the record types' tables.
    /// - Throws: what ``Schema/init(records:)`` and ``init(path:schema:configuration:)`` throw.
    public convenience init(path: String, records: [RecordTable], configuration: Configuration = Configuration()) throws {
        try self.init(path: path, schema: try Schema(records: records), configuration: configuration)
    }
}
