import Foundation

/// One upload-then-download pass of the owner, with every local write fenced by the epoch.
struct SyncPass {
    let database: SharedDatabase
    let backend: any SyncBackend
    let epoch: Int64
    let clientID: String
    var uploadBatch = 64
    var downloadBatch = 1000
    /// Most changes applied in one transaction; a larger backlog is applied in several.
    var maximumApply = 10_000
    var onEvent: (SyncEvent) -> Void = { _ in }

    struct Result {
        var transactions = 0, entries = 0, downloaded = 0
        /// Local writes kept arriving, so the download was not applied yet; run again soon.
        var downloadDeferred = false
    }

    /// Uploads the whole queue, then downloads until the backend has nothing newer. When a local
    /// write arrives before a download can be applied, uploads again first (at most a few rounds).
    func run() throws -> Result {
        var result = Result()
        for _ in 0..<8 {
            try upload(into: &result)
            if try download(into: &result) { return result }
        }
        result.downloadDeferred = true
        return result
    }

    func upload(into result: inout Result) throws {
        var renumberings = 0
        while true {
            let transactions = try database.crudTransactions(limit: uploadBatch)
            if transactions.isEmpty { return }
            do {
                try backend.upload(transactions, clientID: clientID, epoch: epoch)
            } catch TandemError.transactionConflict(_, let conflicting, let highest) where renumberings < 3 {
                renumberings += 1
                try renumberQueue(from: conflicting, after: highest)
                continue
            } catch TandemError.staleEpoch(let held, let current) where held == epoch && current > epoch {
                // The backend saw a newer epoch for this client from a copy of this file (a
                // restored backup). Raise the local epoch to it: this owner steps down and the
                // next election (this process offers again) starts above the backend's.
                try database.write { tx in
                    try Fence.check(tx, epoch: epoch)
                    try tx.execute("UPDATE ps_kv SET value = ? WHERE key = 'epoch'", [current])
                }
                throw TandemError.staleEpoch(held: held, current: current)
            }
            try database.complete(transactions, epoch: epoch)
            let entries = transactions.reduce(0) { $0 + $1.entries.count }
            result.transactions += transactions.count
            result.entries += entries
            onEvent(.uploaded(transactions: transactions.count, entries: entries))
        }
    }

    /// Moves the queued transaction ids from `conflicting` on past `highest` (order and grouping
    /// kept), so that a restored or copied database stops reusing ids the backend has applied.
    func renumberQueue(from conflicting: Int64, after highest: Int64) throws {
        try database.write { tx in
            try Fence.check(tx, epoch: epoch)
            // Earlier transactions in the queue were retries the backend skipped; keep their ids.
            guard conflicting <= highest else { return }
            let shift = highest + 1 - conflicting
            try tx.execute("UPDATE ps_crud SET tx_id = tx_id + ? WHERE tx_id >= ?", [shift, conflicting])
            try tx.execute("UPDATE ps_state SET value = max(value + ?, (SELECT tx_id + 1 FROM ps_crud ORDER BY id DESC LIMIT 1)) WHERE key = 'next_tx'", [shift])
        }
    }

    /// Fetches everything newer than the cursor (up to ``maximumApply`` changes) and applies it
    /// in one write transaction, so the database never shows an older server state between
    /// batches (one row's old value from an early batch over this client's own newer write).
    /// Returns false when the upload queue was not empty, so nothing was applied.
    func download(into result: inout Result) throws -> Bool {
        var cursor = try database.read { try $0.scalar("SELECT value FROM ps_kv WHERE key = 'cursor'").stringValue ?? "" }
        while true {
            // Local writes first: do not fetch what could not be applied.
            if try database.pendingUploadCount() > 0 { return false }
            var changes: [ServerChange] = []
            var next = cursor
            var more = true
            while more && changes.count < maximumApply {
                let batch = try backend.fetchChanges(after: next, limit: downloadBatch)
                if batch.changes.isEmpty && batch.nextCursor == next { more = false; break }
                changes += batch.changes
                next = batch.nextCursor
                more = batch.hasMore
            }
            if next == cursor { return true }
            let applied = try database.write { tx -> Bool in
                try Fence.check(tx, epoch: epoch)
                guard (try tx.scalar("SELECT count(*) FROM ps_crud").int64Value ?? 0) == 0 else { return false }
                try ChangeApplier(schema: try SchemaInstaller.storedSchema(tx) ?? database.schema).apply(changes, in: tx)
                try tx.execute("INSERT OR REPLACE INTO ps_kv(key, value) VALUES ('cursor', ?)", [next])
                // While more changes follow (a backlog over `maximumApply`), `downloading` shows in the status.
                if more {
                    try tx.execute("INSERT OR IGNORE INTO ps_kv(key, value) VALUES ('downloading', 1)")
                } else {
                    try tx.execute("DELETE FROM ps_kv WHERE key = 'downloading'")
                }
                return true
            }
            if !applied { return false }
            cursor = next
            if !changes.isEmpty {
                result.downloaded += changes.count
                onEvent(.downloaded(changes: changes.count))
            }
            if !more { return true }
        }
    }
}

/// Applies downloaded row states directly to the data tables: no view, no trigger, no CRUD
/// entry, so downloads are never uploaded again.
///
/// Where a change goes:
/// - a declared synced table: its `ps_data__` table;
/// - a table that is not declared but whose `ps_data__` table remains (it was dropped from the
///   schema, data kept): that table, so it is current if the table is declared again;
/// - otherwise, and for local-only and insert-only tables: `ps_untyped`, from which a schema
///   upgrade that declares the table as synced moves the rows in.
struct ChangeApplier {
    let schema: Schema

    func apply(_ changes: [ServerChange], in tx: Transaction) throws {
        var keptTables: [String: Bool] = [:]
        for change in changes {
            let target: String
            if let table = schema.table(named: change.table), !table.localOnly, !table.insertOnly {
                target = table.dataTableName
            } else if schema.table(named: change.table) == nil, try keptDataTable(change.table, in: tx, cache: &keptTables) {
                target = "ps_data__" + change.table
            } else {
                try applyUntyped(change, in: tx)
                continue
            }
            let quoted = SQLText.identifier(target)
            switch change.op {
            case .put:
                guard let data = change.data else {
                    throw TandemError.invalidBackend("PUT of \(change.table) id '\(change.rowID)' carries no data")
                }
                do {
                    try tx.execute("INSERT OR REPLACE INTO \(quoted)(id, data) VALUES (?, json(?))", [change.rowID, data])
                } catch let error as SQLiteError where error.code == .error {
                    throw TandemError.invalidBackend("PUT of \(change.table) id '\(change.rowID)' carries invalid JSON: \(data)")
                }
            case .delete:
                try tx.execute("DELETE FROM \(quoted) WHERE id = ?", [change.rowID])
            }
        }
    }

    private func keptDataTable(_ name: String, in tx: Transaction, cache: inout [String: Bool]) throws -> Bool {
        if let known = cache[name] { return known }
        let exists = (try tx.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", ["ps_data__" + name]).int64Value ?? 0) > 0
        cache[name] = exists
        return exists
    }

    /// Rows of tables this database does not keep locally wait in `ps_untyped`.
    private func applyUntyped(_ change: ServerChange, in tx: Transaction) throws {
        switch change.op {
        case .put:
            try tx.execute("INSERT OR REPLACE INTO ps_untyped(type, id, data) VALUES (?, ?, ?)", [change.table, change.rowID, change.data])
        case .delete:
            try tx.execute("DELETE FROM ps_untyped WHERE type = ? AND id = ?", [change.table, change.rowID])
        }
    }
}
