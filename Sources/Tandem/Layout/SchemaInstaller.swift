import Foundation

/// Installs or upgrades a declared schema inside one write transaction, and reads the stored one.
///
/// The schema is stored as JSON in `ps_kv` under `schema`, so later processes can open the file
/// without it. Upgrading regenerates views, triggers and indexes; row data is never migrated
/// (new columns read NULL, removed columns keep their stored values).
enum SchemaInstaller {
    /// The version of the generated views and triggers. A file written by an older Tandem gets
    /// them regenerated (no data migration) the next time a writer opens it.
    static let layoutVersion: Int64 = 10

    static func layoutIsCurrent(_ tx: Transaction) throws -> Bool {
        try tx.stored(.layout).int64Value == layoutVersion
    }

    /// The stored schema, decoded again only when its stored text differs, byte for byte, from
    /// the one this connection decoded last (a download reads it at every pass).
    static func cachedStoredSchema(_ tx: Transaction) throws -> Schema? {
        guard let json = try tx.connection.storedIfPresent(.schema).stringValue else { return nil }
        if let cached = tx.connection[StoredSchemaCache.self], cached.json.utf8.elementsEqual(json.utf8) { return cached.schema }
        let schema = try decodeSchema(json, in: tx)
        tx.connection[StoredSchemaCache.self] = (json, schema)
        return schema
    }

    static func storedSchema(_ tx: Transaction) throws -> Schema? {
        guard let json = try tx.connection.storedIfPresent(.schema).stringValue else { return nil }
        return try decodeSchema(json, in: tx)
    }

    private static func decodeSchema(_ json: String, in tx: Transaction) throws -> Schema {
        do {
            return try JSONDecoder().decode(Schema.self, from: Data(json.utf8))
        } catch {
            throw TandemError.invalidSchema(SchemaProblem(.unreadableFile, "the schema stored in '\(tx.connection.path)' cannot be read: \(error)"))
        }
    }

    /// Creates Tandem's tables and brings views, triggers and indexes to `schema`'s tables (its
    /// migrations are ``MigrationRunner``'s), regenerating them even when they are current with `force`.
    /// - Throws: ``TandemError/invalidSchema(_:)`` on a name collision with an object Tandem did not create.
    static func install(_ schema: Schema, in tx: Transaction, force: Bool = false) throws {
        try schema.validate()
        try tx.executeOwn(InternalTables.ddl)
        try UploadQueueRows.seedLastID(on: tx.connection)
        let stored = try storedSchema(tx)
        if !force, stored?.tables == schema.tables, try layoutIsCurrent(tx) { return }
        try checkCollisions(schema, stored: stored, in: tx)

        for old in stored?.tables ?? [] {
            try dropObjects(of: old, in: tx)
        }
        // Tables whose view and triggers Tandem made, though the stored schema lost them (its
        // settings deleted by another program): made again like the others.
        for table in schema.tables where stored?.table(named: table.name) == nil {
            if try madeByTandem(table, in: tx) { try dropObjects(of: table, in: tx) }
        }
        for table in schema.tables {
            if let old = stored?.table(named: table.name), old.dataTableName != table.dataTableName {
                try tx.executeOwn(table.createDataTable)
                try tx.executeOwn("INSERT OR REPLACE INTO \(table.quotedDataTable)(id, data) SELECT id, data FROM \(old.quotedDataTable)")
                if old.localOnly {
                    // Rows that stayed on this host until now are synced from now on: queue them,
                    // except rows the server changed meanwhile (waiting in ps_untyped), whose
                    // server state wins below.
                    try UploadQueueRows.queuePuts(of: table.name, from: old, in: tx)
                }
                try tx.executeOwn("DROP TABLE \(old.quotedDataTable)")
            }
            try tx.executeOwn(table.createDataTable)
            try checkDataTable(table, in: tx)
            if table.localOnly, let old = stored?.table(named: table.name), !old.localOnly {
                // Nothing of a local-only table leaves the host, what was queued before neither.
                try LocalOnlySwitch.keepOnHost(table, wasInsertOnly: old.insertOnly, in: tx)
            }
            let wasSynced = stored?.table(named: table.name).map { !$0.localOnly && !$0.insertOnly } ?? false
            if !table.localOnly && !table.insertOnly && !wasSynced {
                // Rows downloaded before this table was declared (or while it was local-only or
                // insert-only) wait in ps_untyped.
                try UntypedRows.move(table, in: tx)
            }
            if table.insertOnly && wasSynced {
                // An insert-only table keeps no local rows: the synced rows (server state) wait in
                // ps_untyped, where downloads keep them current, for a switch back to synced.
                try UntypedRows.park(table, in: tx)
            }
            try createObjects(of: table, in: tx)
            // The index is kept while its declaration and data table are; else made again.
            let old = stored?.table(named: table.name)
            try SearchIndexInstaller.install(table, rebuild: force || old?.search != table.search || old?.dataTableName != table.dataTableName, in: tx)
        }
        for old in stored?.tables ?? [] where schema.table(named: old.name) == nil && old.search != nil {
            try SearchIndexInstaller.drop(of: old.name, columns: old.search?.columns.count ?? 1, in: tx)
        }
        try tx.store(.schema, String(decoding: Schema(tables: schema.tables).jsonData(), as: UTF8.self))  // migrations: ps_migrations
        try tx.store(.layout, layoutVersion)
    }

    /// Refuses a schema that collides with objects Tandem did not make for it: a table, view,
    /// index or trigger named like a table the stored schema does not declare, or a table where
    /// a table's data table goes that is not shaped like one. Reads only, so it can run on a
    /// read-only connection before anything is changed.
    /// - Throws: ``TandemError/invalidSchema(_:)`` naming the table and the file.
    static func checkCollisions(_ schema: Schema, stored: Schema?, in tx: Transaction) throws {
        let ours = Set((stored?.tables ?? []).map { $0.name.lowercased() })
        for table in schema.tables where !ours.contains(table.name.lowercased()) {
            if try madeByTandem(table, in: tx) { continue }
            if let type = try tx.scalar("SELECT type FROM sqlite_master WHERE lower(name) = lower(?)", [table.name]).stringValue {
                throw TandemError.invalidSchema(
                    SchemaProblem(.nameCollision, table: table.name, "table '\(table.name)' collides with an existing \(type) of that name in '\(tx.connection.path)'"))
            }
        }
        for table in schema.tables {
            let exists = try tx.scalar("SELECT count(*) FROM sqlite_master WHERE name = ?", [table.dataTableName]).int64Value ?? 0
            if exists > 0 { try checkDataTable(table, in: tx) }
        }
    }

    /// True when `table`'s view is Tandem's: a view of that name with Tandem's INSTEAD OF INSERT
    /// trigger on it, over a data table of Tandem's shape.
    static func madeByTandem(_ table: TableSchema, in tx: Transaction) throws -> Bool {
        let view =
            try tx.scalar(
                """
                SELECT count(*) FROM sqlite_master AS v JOIN sqlite_master AS t ON t.type = 'trigger' AND t.name = ? AND t.tbl_name = v.name
                WHERE v.type = 'view' AND lower(v.name) = lower(?)
                """, [InternalTables.trigger("insert", of: table.name), table.name]
            ).int64Value ?? 0
        return try view > 0 && dataTableProblem(table, in: tx) == nil
    }

    /// Drops and creates the table's view, its INSTEAD OF triggers and its indexes (no row changes).
    static func regenerateObjects(of table: TableSchema, in tx: Transaction) throws {
        try dropObjects(of: table, in: tx)
        try createObjects(of: table, in: tx)
    }

    private static func createObjects(of table: TableSchema, in tx: Transaction) throws {
        try tx.executeOwn(table.createView)
        for sql in table.createTriggers + table.createIndexes + table.createSearchTriggers { try tx.executeOwn(sql) }
    }

    static func dropObjects(of table: TableSchema, in tx: Transaction) throws {
        try SearchIndexInstaller.dropTriggers(of: table, in: tx)
        for kind in ["insert", "update", "delete"] {
            try tx.executeOwn("DROP TRIGGER IF EXISTS \(SQLText.identifier(InternalTables.trigger(kind, of: table.name)))")
        }
        try tx.executeOwn("DROP VIEW IF EXISTS \(table.quotedName)")
        let indexes = try tx.fetchAll(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE ? ESCAPE '\\'",
            [InternalTables.indexPattern(of: table.name)])
        for row in indexes { if let name = row[0].stringValue { try tx.executeOwn("DROP INDEX IF EXISTS \(SQLText.identifier(name))") } }
    }

    /// The data table must be `(id TEXT PRIMARY KEY, data TEXT)`.
    private static func checkDataTable(_ table: TableSchema, in tx: Transaction) throws {
        if let problem = try dataTableProblem(table, in: tx) {
            throw TandemError.invalidSchema(
                SchemaProblem(.unreadableFile, table: table.name, "the data table of '\(table.name)' in '\(tx.connection.path)' \(problem)"))
        }
    }

    /// Why the table's existing data table is not `(id TEXT PRIMARY KEY, data TEXT)`, or nil.
    static func dataTableProblem(_ table: TableSchema, in tx: Transaction) throws -> String? {
        let type = try tx.scalar("SELECT type FROM sqlite_master WHERE name = ?", [table.dataTableName]).stringValue
        guard type == "table" else { return "is \(type.map { "a \($0)" } ?? "missing"), not a table" }
        let shape = try columnShape(of: table.dataTableName, in: tx)
        guard shape == ["id/TEXT/1", "data/TEXT/0"] else {
            return "has the wrong columns (expected id TEXT PRIMARY KEY, data TEXT; found \(describe(shape)))"
        }
        return nil
    }

    /// `name/TYPE/pk` for each column of a table, in order.
    static func columnShape(of table: String, in tx: Transaction) throws -> [String] {
        try tx.fetchAll("SELECT name, type, pk FROM pragma_table_xinfo(?)", [table]).map {
            "\($0[0].stringValue ?? "")/\($0[1].stringValue?.uppercased() ?? "")/\($0[2].int64Value ?? 0)"
        }
    }

    /// A ``columnShape(of:in:)`` as column definitions: `id TEXT PRIMARY KEY, data TEXT, extra`.
    static func describe(_ shape: [String]) -> String {
        shape.isEmpty
            ? "no columns"
            : shape.map { column in
                let parts = column.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
                return ([parts[0]] + (parts[1].isEmpty ? [] : [parts[1]]) + (parts[2] == "0" ? [] : ["PRIMARY KEY"])).joined(separator: " ")
            }.joined(separator: ", ")
    }
}

/// The stored schema as a connection last decoded it, with the text it was decoded from.
enum StoredSchemaCache: ConnectionAttachmentKey {
    static var defaultValue: (json: String, schema: Schema)? { nil }
}
