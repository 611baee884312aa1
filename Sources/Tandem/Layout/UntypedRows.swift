/// `ps_untyped`: downloaded rows of tables this database does not keep locally (not declared,
/// local-only or insert-only), kept current by downloads until a schema declares the table synced.
enum UntypedRows {
    /// How many rows wait in the store.
    static func count(in tx: Transaction) throws -> Int {
        Int(try tx.connection.scalar("SELECT count(*) FROM ps_untyped").int64Value ?? 0)
    }

    static func put(_ table: String, id: String, data: String?, in tx: Transaction) throws {
        try tx.executeOwn("INSERT OR REPLACE INTO ps_untyped(type, id, data) VALUES (?, ?, ?)", [table, id, data])
    }

    static func delete(_ table: String, id: String, in tx: Transaction) throws {
        try tx.executeOwn("DELETE FROM ps_untyped WHERE type = ? AND id = ?", [table, id])
    }

    /// Removes the waiting rows of `table` (a TRUNCATE on the server), or of every table, but
    /// those `kept` says to keep (rows with pending uploads).
    static func removeAll(of table: String?, keeping kept: (RowKey) -> Bool, in tx: Transaction) throws {
        var doomed: [[DatabaseValue]] = []
        try tx.connection.forEachRow("SELECT type, id FROM ps_untyped WHERE ?1 IS NULL OR type = ?1", [table.map(DatabaseValue.text) ?? .null]) { row in
            let key = RowKey(table: row[0].stringValue ?? "", id: row[1].stringValue ?? "")
            if !kept(key) { doomed.append([row[0], row[1]]) }
            return true
        }
        for key in doomed { try tx.executeOwn("DELETE FROM ps_untyped WHERE type = ? AND id = ?", key) }
    }

    /// Moves the waiting rows of `table` into its data table.
    static func move(_ table: TableSchema, in tx: Transaction) throws {
        try tx.executeOwn("INSERT OR REPLACE INTO \(table.quotedDataTable)(id, data) SELECT id, data FROM ps_untyped WHERE type = ?", [table.name])
        try tx.executeOwn("DELETE FROM ps_untyped WHERE type = ?", [table.name])
    }

    /// Parks the rows of `table`'s data table here and empties it.
    static func park(_ table: TableSchema, in tx: Transaction) throws {
        try tx.executeOwn("INSERT OR REPLACE INTO ps_untyped(type, id, data) SELECT ?, id, data FROM \(table.quotedDataTable)", [table.name])
        try tx.executeOwn("DELETE FROM \(table.quotedDataTable)")
    }

    static func clear(in tx: Transaction) throws {
        try tx.executeOwn("DELETE FROM ps_untyped")
    }

    /// A SQL condition on `id`: the row waits here for `table` (bind the table's name).
    static let waitingCondition = "id IN (SELECT id FROM ps_untyped WHERE type = ?)"
}
