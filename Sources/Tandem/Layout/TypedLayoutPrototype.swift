/// A prototype of typed storage, which `Tools/bench/run --only layouts` measures against the JSON layout:
/// a declared table's rows in a native table of typed columns behind the same view, whose
/// INSTEAD OF INSERT trigger applies the same write rules (``TableSchema/storedValue(_:_:in:checkingText:)``)
/// and queues the same CRUD entry as the JSON layout's.
///
/// It takes inserts only: no update, delete, download, migration or search index follows it. It
/// exists to measure what typed columns would buy on the write path, and only
/// `tandem-test-support typed-layout` installs it.
package enum TypedLayoutPrototype {
    /// Replaces the empty table `name`'s data table, view, indexes and triggers by typed ones.
    /// - Throws: ``TandemError/invalidSchema(_:)`` for a table that is not declared, local-only,
    ///   insert-only or not empty; what SQLite throws.
    package static func install(table name: String, in tx: Transaction) throws {
        guard let table = try SchemaInstaller.storedSchema(tx)?.table(named: name), !table.localOnly, !table.insertOnly, table.search == nil
        else {
            throw TandemError.invalidSchema(
                SchemaProblem(.invalidTable, table: name, "'\(name)' is not a declared table the prototype takes (synced, not insert-only, unsearched)"))
        }
        guard try tx.scalar("SELECT count(*) FROM \(table.quotedDataTable)").int64Value == 0 else {
            throw TandemError.invalidSchema(SchemaProblem(.invalidTable, table: name, "'\(name)' holds rows: the prototype starts empty"))
        }
        for kind in ["insert", "update", "delete"] {
            try tx.executeOwn("DROP TRIGGER IF EXISTS \(SQLText.identifier(InternalTables.trigger(kind, of: name)))")
        }
        try tx.executeOwn("DROP VIEW \(table.quotedName)")
        try tx.executeOwn("DROP TABLE \(table.quotedDataTable)")
        for statement in statements(table) { try tx.executeOwn(statement) }
    }

    /// The typed data table, its indexes, the view and its insert trigger.
    static func statements(_ table: TableSchema) -> [String] {
        // A real column has no type: SQLite's REAL affinity would store 2.0 as the integer 2 and
        // read -0.0 back as 0.0. The values come converted by the write rules.
        let declared = table.columns.map { column in
            SQLText.identifier(column.name) + (column.type == .integer ? " INTEGER" : column.type == .text ? " TEXT" : "")
        }
        let create = "CREATE TABLE \(table.quotedDataTable)(id TEXT PRIMARY KEY NOT NULL, \(declared.joined(separator: ", ")))"
        let indexes = table.indexes.map { index in
            "CREATE INDEX \(SQLText.identifier(InternalTables.index(index.name, of: table.name))) ON \(table.quotedDataTable)"
                + "(\(index.columns.map(SQLText.identifier).joined(separator: ", ")))"
        }
        let names = (["id"] + table.columns.map(\.name)).map(SQLText.identifier).joined(separator: ", ")
        let view = "CREATE VIEW \(table.quotedName)(\(names)) AS SELECT \(names) FROM \(table.quotedDataTable)"
        let values = table.columns.map { table.storedValue("NEW.\(SQLText.identifier($0.name))", $0) }.joined(separator: ", ")
        // The CRUD entry's data as the JSON layout's: the stored values, a real as realLiteral writes it.
        let data =
            "json_object("
            + table.columns.map { column in
                let value = "d.\(SQLText.identifier(column.name))"
                let json = column.type == .real ? "CASE WHEN \(value) IS NULL THEN NULL ELSE json(\(table.realLiteral(value, column: column))) END" : value
                return "\(SQLText.literal(column.name)), \(json)"
            }.joined(separator: ", ") + ")"
        let trigger = """
            CREATE TRIGGER \(SQLText.identifier(InternalTables.trigger("insert", of: table.name))) INSTEAD OF INSERT ON \(table.quotedName) \
            FOR EACH ROW BEGIN \(table.idCheck)
            INSERT INTO \(table.quotedDataTable)(\(names)) VALUES (coalesce(CAST(NEW.id AS TEXT), \(InternalTables.uuidExpression)), \(values));
            INSERT INTO ps_crud(id, tx_id, data) SELECT \(InternalTables.nextCrudID), \(InternalTables.nextTransactionID), \
            json_object('op', 'PUT', 'type', \(SQLText.literal(table.name)), 'id', d.id, 'data', \(data)) \
            FROM \(table.quotedDataTable) AS d WHERE changes() > 0 AND d.rowid = last_insert_rowid();
            \(InternalTables.recordLastCrudID) END
            """
        return [create] + indexes + [view, trigger]
    }
}
