/// `ps_untyped`: downloaded rows of tables this database does not keep locally (not declared,
/// local-only or insert-only), kept current by downloads until a schema declares the table synced.
enum UntypedRows {
    static func put(_ table: String, id: String, data: String?, in tx: Transaction) throws {
        try tx.executeOwn("INSERT OR REPLACE INTO ps_untyped(type, id, data) VALUES (?, ?, ?)", [table, id, data])
    }

    static func delete(_ table: String, id: String, in tx: Transaction) throws {
        try tx.executeOwn("DELETE FROM ps_untyped WHERE type = ? AND id = ?", [table, id])
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
