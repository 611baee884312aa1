import Foundation

extension SharedDatabase {
    /// The number of CRUD entries waiting for upload.
    public func pendingUploadCount() throws -> Int {
        try read { Int(try $0.scalar("SELECT count(*) FROM ps_crud").int64Value ?? 0) }
    }

    /// The oldest whole local transaction in the upload queue, or nil when it is empty.
    public func nextCrudTransaction() throws -> CrudTransaction? {
        try crudTransactions(limit: 1).first
    }

    /// Whole transactions from the head of the upload queue, oldest first, up to `limit` transactions.
    ///
    /// The transaction ids returned are sealed: when the last one is still the id that view
    /// triggers hand out (a client that does not close transactions, such as the `sqlite3` shell,
    /// wrote it), the id is moved on first, so no entry written later can join a transaction
    /// that is being uploaded.
    public func crudTransactions(limit: Int) throws -> [CrudTransaction] {
        let (transactions, open) = try read { tx in
            (try UploadQueueRows.head(transactions: limit, in: tx), try UploadQueueRows.isOpen(in: tx))
        }
        guard open, writer != nil else { return transactions }
        return try write { tx in
            try UploadQueueRows.seal(in: tx)
            return try UploadQueueRows.head(transactions: limit, in: tx)
        }
    }

    /// Removes uploaded transactions from the queue, fenced like every other sync write: only
    /// the owner, with the epoch it was elected with, can do it, so no other process can drop
    /// queued writes while the owner uploads them.
    /// - Parameter epoch: the owner's epoch (fencing token).
    /// - Throws: ``TandemError/staleEpoch(held:current:)`` when `epoch` is not the current one; nothing is removed.
    public func complete(_ transactions: [CrudTransaction], epoch: Int64) throws {
        try write { tx in
            try Fence.check(tx, epoch: epoch)
            try UploadQueueRows.complete(transactions, in: tx)
        }
    }
}

/// The upload queue's rows. Transaction ids never decrease in `ps_crud` id order (triggers read
/// `next_tx`, which only grows), so the queue is read from its head by id, with no index on `tx_id`.
enum UploadQueueRows {
    /// The first `limit` whole transactions.
    static func head(transactions limit: Int, in tx: Transaction) throws -> [CrudTransaction] {
        var result: [CrudTransaction] = []
        var current: [CrudEntry] = []
        try tx.connection.forEachRow("SELECT id, tx_id, data FROM ps_crud ORDER BY id") { row in
            guard let id = row[0].int64Value, let txID = row[1].int64Value, let json = row[2].stringValue else { return true }
            if let last = current.last, last.transactionID != txID {
                result.append(CrudTransaction(transactionID: last.transactionID, entries: current))
                current = []
                if result.count >= limit { return false }
            }
            current.append(try CrudEntry(id: id, transactionID: txID, json: json))
            return true
        }
        if let last = current.last, result.count < limit {
            result.append(CrudTransaction(transactionID: last.transactionID, entries: current))
        }
        return result
    }

    /// True when the newest entry's transaction id is still the one triggers hand out.
    static func isOpen(in tx: Transaction) throws -> Bool {
        guard let newest = try tx.scalar("SELECT tx_id FROM ps_crud ORDER BY id DESC LIMIT 1").int64Value else { return false }
        let next = try tx.scalar("SELECT value FROM ps_state WHERE key = 'next_tx'").int64Value ?? 1
        return next <= newest
    }

    /// Moves `next_tx` past every queued entry's transaction id.
    static func seal(in tx: Transaction) throws {
        try tx.execute("""
            UPDATE ps_state SET value = (SELECT tx_id + 1 FROM ps_crud ORDER BY id DESC LIMIT 1)
            WHERE key = 'next_tx' AND value <= (SELECT tx_id FROM ps_crud ORDER BY id DESC LIMIT 1)
            """)
    }

    /// Deletes the uploaded entries: every entry up to the batch's last id (ids only grow, so no
    /// later entry has a smaller one, and sealed transaction ids gain no later entries).
    static func complete(_ transactions: [CrudTransaction], in tx: Transaction) throws {
        guard let last = transactions.last else { return }
        try tx.execute("DELETE FROM ps_crud WHERE id <= ?", [last.lastEntryID])
    }
}
