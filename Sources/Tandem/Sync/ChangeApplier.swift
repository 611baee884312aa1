import Foundation

/// Applies downloaded row states directly to the data tables: no view, no trigger, no CRUD
/// entry, so downloads are never uploaded again.
///
/// Where a change goes:
/// - a declared synced table: its `ps_data__` table;
/// - a table that is not declared but whose `ps_data__` table remains (it was dropped from the
///   schema, data kept): that table, so it is current if the table is declared again;
/// - otherwise, and for local-only and insert-only tables: `ps_untyped`, from which a schema
///   upgrade that declares the table as synced moves the rows in.
final class ChangeApplier {
    let schema: Schema
    /// Rows (table, id) with entries still in the upload queue: their downloaded states are
    /// skipped, since the backend's answer to those entries comes later.
    let pending: [RowKey: Int]
    /// Per table name: the quoted data table its changes go to, or nil for `ps_untyped`; found
    /// once per applier (one download transaction), whatever the number of changes.
    private var targets: [String: String?] = [:]
    /// The file's column renames, read once per applier (``RenamedColumns``).
    private var renamed: RenamedColumns?
    /// What the file's migrations dropped, read once per applier (``MigrationDrops``).
    private var dropped: MigrationDrops?
    /// The file's table renames, read once per applier (``RenamedTables``).
    private var renamedTables: RenamedTables?
    /// During a full sync (``beginFullSync(in:)``): per table, the ids its PUTs wrote.
    /// (A list, not a set: two ids Swift's `String` equality takes for one are two rows.)
    private var written: [String: [String]]?

    init(schema: Schema, pending: [RowKey: Int]) {
        self.schema = schema
        self.pending = pending
    }

    func apply(_ changes: [ServerChange], in tx: Transaction) throws {
        if dropped == nil { dropped = try MigrationDrops.load(in: tx) }
        if renamedTables == nil { renamedTables = try RenamedTables.load(in: tx) }
        for serverChange in changes {
            let change = renamedTables?.local(serverChange, schema: schema) ?? serverChange
            guard pending[RowKey(table: change.table, id: change.rowID)] == nil else { continue }
            if dropped?.discards(table: change.table, declared: schema.table(named: change.table)) == true { continue }
            guard let quoted = try target(of: change.table, in: tx) else {
                try applyUntyped(change, in: tx)
                continue
            }
            switch change.op {
            case .put:
                guard let data = change.data else {
                    throw TandemError.invalidBackend("PUT of \(change.table) id '\(change.rowID)' carries no data")
                }
                written?[change.table, default: []].append(change.rowID)
                do {
                    // An upsert updates the row in place (`INSERT OR REPLACE` deleted it and
                    // inserted it again), and not at all when its stored text is the same.
                    if renamed == nil { renamed = try RenamedColumns.load(in: tx) }
                    let moved = renamed?.downloaded("json(?2)", table: change.table) ?? "json(?2)"
                    let row = dropped?.downloaded(moved, table: change.table, declared: schema.table(named: change.table)) ?? moved
                    try tx.executeOwn(
                        "INSERT INTO \(quoted)(id, data) VALUES (?1, \(row)) ON CONFLICT(id) DO UPDATE SET data = excluded.data WHERE data IS NOT excluded.data",
                        [change.rowID, data])
                } catch let error as SQLiteError where error.code == .error {
                    throw TandemError.invalidBackend("PUT of \(change.table) id '\(change.rowID)' carries invalid JSON: \(data)")
                }
            case .delete:
                try tx.executeOwn("DELETE FROM \(quoted) WHERE id = ?", [change.rowID])
            case .truncate:
                try truncate(change.table, in: tx)
            }
        }
    }

    /// Removes every row of `table` that has no pending upload (a TRUNCATE on the server): the
    /// pending ones reach the server later and come back in its answer, or are deleted there.
    func truncate(_ table: String, in tx: Transaction) throws {
        try UntypedRows.removeAll(of: table, keeping: { self.pending[$0] != nil }, in: tx)
        try removeRows(of: table, keeping: [], in: tx)
    }

    /// Removes every row of `table`'s data table except those with an id in `kept` and those
    /// with a pending upload.
    private func removeRows(of table: String, keeping kept: [String], in tx: Transaction) throws {
        guard let quoted = try target(of: table, in: tx) else { return }
        let kept = kept + pending.keys.filter { $0.table == table }.map(\.id)
        if kept.isEmpty {
            try tx.executeOwn("DELETE FROM \(quoted)")
        } else {
            // By the ids' bytes in hexadecimal: SQLite's JSON functions end text at an escaped NUL.
            try tx.executeOwn("DELETE FROM \(quoted) WHERE hex(id) NOT IN (SELECT value FROM json_each(?))", [SQLText.hexJSONArray(kept)])
        }
    }

    /// Before a full sync's changes: removes the rows waiting in `ps_untyped` that have no
    /// pending upload, and notes the ids the changes write from here on, so that
    /// ``endFullSync(in:)`` removes the rest. The full sync then leaves exactly the server's
    /// rows plus the pending ones, and writes only rows that differ: one that is the same (an
    /// owner's own rows, downloaded again) is not written at all, where removing every row
    /// first wrote each of them twice and woke every live query on its table.
    func beginFullSync(in tx: Transaction) throws {
        try UntypedRows.removeAll(of: nil, keeping: { self.pending[$0] != nil }, in: tx)
        written = [:]
    }

    /// After a full sync's changes: removes every row of the tables downloads write to that no
    /// PUT since ``beginFullSync(in:)`` wrote and that has no pending upload.
    func endFullSync(in tx: Transaction) throws {
        guard let written else { return }
        for table in try syncedTables(in: tx) { try removeRows(of: table, keeping: written[table, default: []], in: tx) }
        self.written = nil
    }

    /// The tables downloads write rows of: the declared synced ones, and those dropped from the
    /// schema whose rows are kept.
    private func syncedTables(in tx: Transaction) throws -> [String] {
        var tables = Set(schema.tables.filter { !$0.localOnly && !$0.insertOnly }.map(\.name))
        for name in try tx.fetchAll("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap({ $0[0].stringValue }) {
            if let table = InternalTables.declaredTable(ofDataTable: name), name == InternalTables.dataTable(of: table, localOnly: false),
                schema.table(named: table) == nil
            {
                tables.insert(table)  // a table dropped from the schema whose rows are kept
            }
        }
        return tables.sorted()
    }

    /// Where `table`'s changes go (see the type's documentation).
    private func target(of table: String, in tx: Transaction) throws -> String? {
        if let known = targets[table] { return known }
        let target: String?
        if let declared = schema.table(named: table) {
            target = declared.localOnly || declared.insertOnly ? nil : SQLText.identifier(declared.dataTableName)
        } else {
            let kept = InternalTables.dataTable(of: table, localOnly: false)
            let exists = (try tx.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [kept]).int64Value ?? 0) > 0
            target = exists ? SQLText.identifier(kept) : nil
        }
        targets[table] = target
        return target
    }

    /// Rows of tables this database does not keep locally wait in `ps_untyped`.
    private func applyUntyped(_ change: ServerChange, in tx: Transaction) throws {
        switch change.op {
        case .put:
            try UntypedRows.put(change.table, id: change.rowID, data: change.data, in: tx)
        case .delete:
            try UntypedRows.delete(change.table, id: change.rowID, in: tx)
        case .truncate:
            try UntypedRows.removeAll(of: change.table, keeping: { self.pending[$0] != nil }, in: tx)
        }
    }
}
