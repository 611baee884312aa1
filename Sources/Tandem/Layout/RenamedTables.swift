import Foundation

/// The table renames migrations made in this file: `{"notes":"memos"}` (each name a table had,
/// its name now), stored in `ps_kv`.
///
/// A server's change log keeps the changes made before a table was renamed on it under the old
/// name (PostgreSQL's setup renames the table; the embedded backend's server keeps the names
/// rows were uploaded with): a downloaded change of a table the file no longer declares under
/// that name is applied to the table it became (``local(_:schema:)``), so that a host that was
/// away during the rename still gets every edit.
struct RenamedTables {
    private var names: [String: String]

    /// The renames stored in the file (none when there are none, or the stored text is damaged).
    static func load(in tx: Transaction) throws -> RenamedTables {
        RenamedTables(names: try tx.storedJSON(.renamedTables, as: [String: String].self) ?? [:])
    }

    /// Records that table `from` is now `to` (every earlier name of `from` too).
    static func record(from: String, to: String, in tx: Transaction) throws {
        var renames = try load(in: tx)
        for (old, now) in renames.names where now == from { renames.names[old] = to }
        renames.names[from] = to
        renames.names[to] = nil
        try tx.storeJSON(.renamedTables, renames.names)
    }

    /// `change` as this file names its table: under the table's name now when a migration renamed
    /// it and `schema` does not declare the old name again; else as it is.
    func local(_ change: ServerChange, schema: Schema) -> ServerChange {
        guard let now = names[change.table], schema.table(named: change.table) == nil else { return change }
        return ServerChange(op: change.op, table: now, rowID: change.rowID, data: change.data)
    }
}
