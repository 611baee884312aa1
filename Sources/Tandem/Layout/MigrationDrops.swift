import Foundation

/// The columns and tables migrations dropped from this file's synced tables:
/// `{"columns":{"notes":["body"]},"tables":["drafts"]}`, stored in `ps_kv`.
///
/// A server keeps what a migration dropped until every host has migrated (PostgreSQL's expand
/// step; the embedded backend's server keeps the keys rows were uploaded with), and sends it
/// with the rows it sends. A downloaded row is stored without the dropped columns
/// (``downloaded(_:table:declared:)``), and a dropped table's rows are not stored at all
/// (``discards(table:declared:)``), so that what a drop removed from this host
/// (`discardValues: true`, `discardRows: true`) does not come back with the next change.
struct MigrationDrops: Codable {
    private var columns: [String: [String]] = [:]
    private var tables: [String] = []

    /// The drops stored in the file (none when there are none, or the stored text is damaged).
    static func load(in tx: Transaction) throws -> MigrationDrops {
        try tx.storedJSON(.migrationDrops, as: MigrationDrops.self) ?? MigrationDrops()
    }

    /// Records that `table`'s column `column` was dropped.
    static func record(table: String, column: String, in tx: Transaction) throws {
        try update(in: tx) { $0.columns[table] = Array(Set($0.columns[table] ?? []).union([column])).sorted() }
    }

    /// Records that `table` was dropped.
    static func record(table: String, in tx: Transaction) throws {
        try update(in: tx) { drops in
            drops.tables = Array(Set(drops.tables).union([table])).sorted()
            drops.columns[table] = nil
        }
    }

    /// Moves `from`'s dropped columns to `to`, a table renamed.
    static func renameTable(from: String, to: String, in tx: Transaction) throws {
        try update(in: tx) { drops in
            if let columns = drops.columns.removeValue(forKey: from) { drops.columns[to] = columns }
        }
    }

    private static func update(in tx: Transaction, _ change: (inout MigrationDrops) -> Void) throws {
        var drops = try load(in: tx)
        change(&drops)
        try tx.storeJSON(.migrationDrops, drops)
    }

    /// True when a downloaded change of `table` is not stored: a migration dropped the table and
    /// the file does not declare it again (`declared` is nil).
    func discards(table: String, declared: TableSchema?) -> Bool {
        declared == nil && tables.contains(table)
    }

    /// The SQL expression of a downloaded row of `table` (the JSON text `json`) without the
    /// columns dropped from it that `declared` (the table as the file declares it now) does not
    /// declare again; nil when there are none.
    func downloaded(_ json: String, table: String, declared: TableSchema?) -> String? {
        guard let dropped = columns[table] else { return nil }  // every change of a table with no drop
        let declaredNames = Set((declared?.columns ?? []).map { $0.name.lowercased() })
        let gone = dropped.filter { !declaredNames.contains($0.lowercased()) }
        guard !gone.isEmpty else { return nil }
        return "json_remove(\(json), \(gone.map { SQLText.literal("$." + $0) }.joined(separator: ", ")))"
    }
}
