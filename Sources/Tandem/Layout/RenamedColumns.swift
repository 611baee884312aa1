import Foundation

/// The column renames migrations made in this file, per table: `{"notes":{"title":"heading"}}`
/// (the first name a column had, its name now), stored in `ps_kv`.
///
/// A server that has not renamed a column (the embedded backend's, or a PostgreSQL row written
/// before the rename was expanded) sends rows under the old name: a downloaded row that holds the
/// old key and not the new one is stored with the value under the new key
/// (``downloaded(_:table:)``), so that the renamed column reads it.
struct RenamedColumns {
    private var tables: [String: [String: String]]

    /// The renames stored in the file (none when there are none, or the stored text is damaged).
    static func load(in tx: Transaction) throws -> RenamedColumns {
        RenamedColumns(tables: try tx.storedJSON(.renamedColumns, as: [String: [String: String]].self) ?? [:])
    }

    /// Records that `table`'s column `from` is now `to` (a column renamed before keeps its first name).
    static func record(table: String, from: String, to: String, in tx: Transaction) throws {
        var renames = try load(in: tx)
        var columns = renames.tables[table] ?? [:]
        let first = columns.first { $0.value == from }?.key ?? from
        columns = columns.filter { $0.value != from }
        if first != to { columns[first] = to }
        renames.tables[table] = columns
        try renames.store(in: tx)
    }

    /// Moves `from`'s renames to `to`, a table renamed.
    static func renameTable(from: String, to: String, in tx: Transaction) throws {
        var renames = try load(in: tx)
        guard let columns = renames.tables.removeValue(forKey: from) else { return }
        renames.tables[to] = columns
        try renames.store(in: tx)
    }

    private func store(in tx: Transaction) throws {
        try tx.storeJSON(.renamedColumns, tables)
    }

    /// The SQL expression of a downloaded row of `table` (the JSON text `json`) as it is stored:
    /// each value under a renamed column's old key, where the row has none under the new one,
    /// moved to the new key; nil when the table has no renamed column.
    func downloaded(_ json: String, table: String) -> String? {
        guard let columns = tables[table], !columns.isEmpty else { return nil }
        return columns.sorted { $0.key < $1.key }.reduce(json) { row, rename in
            let old = SQLText.literal("$." + rename.key), new = SQLText.literal("$." + rename.value)
            return "(SELECT CASE WHEN json_type(r, \(old)) IS NOT NULL AND json_type(r, \(new)) IS NULL "
                + "THEN json_set(json_remove(r, \(old)), \(new), r -> \(old)) ELSE r END FROM (SELECT \(row) AS r))"
        }
    }
}
