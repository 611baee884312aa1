import Foundation
import Tandem

/// One upload batch inside its server transaction: the epoch check, the applied-upload markers
/// and each CRUD entry under the conflict rule, writing only the columns the schema declares.
struct PostgresUpload {
    let db: PostgresConnection
    /// The server's synced tables and their declared columns (``PostgresSetup/columnRegistry(on:)``).
    let columns: [String: [(name: String, type: ColumnSchema.ColumnType)]]
    /// The columns each table serves only for hosts of an older schema: a PUT writes one only
    /// when it names it (a migrated host's PUT does not, and leaves the older hosts' value).
    var keptForOlder: [String: Set<String>] = [:]

    /// The columns a PUT of `table` writes: every declared one, but those kept for older hosts
    /// that `data` does not name.
    func putColumns(of table: String, naming data: [String: JSONValue]?) -> [(name: String, type: ColumnSchema.ColumnType)] {
        let declared = columns[table] ?? []
        guard let kept = keptForOlder[table], !kept.isEmpty else { return declared }
        return declared.filter { !kept.contains($0.name) || data?[$0.name] != nil }
    }

    /// Locks the client's epoch row and refuses an epoch older than one seen. Marks the
    /// transaction as an upload, whose every row write is logged (another application's update
    /// that changes no declared column is not). One server function (`tandem_upload_begin`,
    /// ``pipelineFunctions``), which the one-round-trip path calls too.
    /// - Throws: ``TandemError/staleEpoch(held:current:)``.
    func checkEpoch(_ epoch: Int64, clientID: String) throws {
        do {
            try db.execute("SELECT tandem_upload_begin($1, $2)", [clientID, String(epoch)])
        } catch let error as PostgresError where error.sqlState == Self.staleEpochState {
            throw TandemError.staleEpoch(held: epoch, current: error.detail.flatMap { Int64($0) } ?? 0)
        }
    }

    /// Records `transaction` as applied; false when it was applied before (a retry).
    /// - Throws: ``TandemError/transactionConflict(clientID:transactionID:highest:)`` when the
    ///   pair was applied with other entries (a client file restored from a backup).
    func mark(_ transaction: CrudTransaction, clientID: String) throws -> Bool {
        try !markAll([transaction], clientID: clientID).isEmpty
    }

    /// Applies `entry`; an error that retrying cannot fix (``PostgresError/isPermanent``) is a
    /// rejected upload naming its table and row, which the client sets aside.
    func apply(_ entry: CrudEntry) throws {
        do {
            try applyEntry(entry)
        } catch let error as PostgresError where error.isPermanent {
            throw TandemError.uploadRejected(table: entry.table, rowID: entry.rowID, reason: "the server refused it: \(error.message)")
        }
    }

    /// The statements below give bare parameters (`$2`) to columns, whose types PostgreSQL
    /// infers from the table: they are never prepared (``PostgresPreparedStatements``), so that
    /// a column whose type `tandem backend setup` changed meanwhile takes the value as it would
    /// have from the start.
    private func applyEntry(_ entry: CrudEntry) throws {
        guard let declared = columns[entry.table] else {
            throw TandemError.uploadRejected(
                table: entry.table, rowID: entry.rowID,
                reason:
                    "the server has no synced table \(entry.table): when the server's schema is newer (the table renamed or dropped), migrate this host to it; else run \(Remedy.setUpServer.apiTerms) with the current schema"
            )
        }
        let types = Dictionary(declared.map { ($0.name, $0.type) }, uniquingKeysWith: { a, _ in a })
        let table = SQLText.identifier(entry.table)
        switch entry.op {
        case .delete:
            let delete = "DELETE FROM \(table) WHERE id = $1 RETURNING 1"
            try applyOrRefuse(entry) { try !db.execute(delete, [entry.serverRowID], preparing: false).isEmpty }
        case .put:
            for key in (entry.data ?? [:]).keys where types[key] == nil { try PostgresValues.unknownColumn(key, entry: entry) }
            let written = putColumns(of: entry.table, naming: entry.data)
            let names = written.map(\.name)
            let values = try written.map { try PostgresValues.text(entry.data?[$0.name] ?? .null, column: $0.name, type: $0.type, entry: entry) }
            let list = (["id"] + names.map(SQLText.identifier)).joined(separator: ", ")
            let marks = (1...(names.count + 1)).map { "$\($0)" }.joined(separator: ", ")
            let updates = names.map { "\(SQLText.identifier($0)) = EXCLUDED.\(SQLText.identifier($0))" }.joined(separator: ", ")
            try db.execute(
                "INSERT INTO \(table)(\(list)) VALUES (\(marks)) ON CONFLICT (id) DO UPDATE SET \(updates.isEmpty ? "id = EXCLUDED.id" : updates)",
                [entry.serverRowID] + values, preparing: false)
        case .patch:
            let data = entry.data ?? [:]
            let names = data.keys.sorted()
            for name in names where types[name] == nil { try PostgresValues.unknownColumn(name, entry: entry) }
            let values = try names.map { try PostgresValues.text(data[$0]!, column: $0, type: types[$0]!, entry: entry) }
            let sets = names.enumerated().map { "\(SQLText.identifier($1)) = $\($0 + 2)" }.joined(separator: ", ")
            let update = "UPDATE \(table) SET \(sets.isEmpty ? "id = id" : sets) WHERE id = $1 RETURNING 1"
            try applyOrRefuse(entry) { try !db.execute(update, [entry.serverRowID] + values, preparing: false).isEmpty }
        }
    }

    /// Runs `write` (a DELETE or a PATCH of `entry`'s row), which says whether it found the row.
    /// A row it did not find is missing (the delete wins: its deletion is logged), was inserted
    /// by a transaction that committed meanwhile (written again), or is one this login role may
    /// not see: outside its scopes, which refuses the entry (set aside by the client).
    private func applyOrRefuse(_ entry: CrudEntry, _ write: () throws -> Bool) throws {
        for _ in 0..<2 {
            if try write() { return }
            if try logDeletionOfMissingRow(entry) { return }
        }
        throw PostgresError("the row \(entry.rowID) of \(entry.table) is not among those this login role may change (its scopes)", sqlState: "42501")
    }

    /// The delete wins over a PATCH of a missing row: logs the row's deletion so the patching
    /// client drops its copy (`tandem_log_missing`, which holds the id's slot meanwhile, so the
    /// deletion never follows a concurrent insert of the id in the log's order).
    /// - Returns: false when the row is there after all, seen by this role or not (nothing logged).
    private func logDeletionOfMissingRow(_ entry: CrudEntry) throws -> Bool {
        try db.execute("SELECT tandem_log_missing($1, $2)", [entry.table, entry.serverRowID]).first?.first == "t"
    }
}
