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
    public func crudTransactions(limit: Int) throws -> [CrudTransaction] {
        try read { try UploadQueueRows.head(transactions: limit, in: $0) }
    }

    /// Removes uploaded transactions from the queue.
    public func complete(_ transactions: [CrudTransaction]) throws {
        try write { try UploadQueueRows.complete(transactions, in: $0) }
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

    /// Deletes the uploaded entries: every entry up to the batch's last id (ids only grow, so no
    /// later entry has a smaller one). Entries that a non-Tandem writer appended afterwards under
    /// the last uploaded transaction id are moved to a fresh id, so no id is ever uploaded twice.
    static func complete(_ transactions: [CrudTransaction], in tx: Transaction) throws {
        guard let last = transactions.last else { return }
        try tx.execute("DELETE FROM ps_crud WHERE id <= ?", [last.lastEntryID])
        let next = try tx.scalar("SELECT value FROM ps_state WHERE key = 'next_tx'").int64Value ?? 1
        let head = try tx.scalar("SELECT tx_id FROM ps_crud ORDER BY id LIMIT 1").int64Value
        if head == last.transactionID {
            let fresh = max(next, last.transactionID + 1)
            try tx.execute("UPDATE ps_crud SET tx_id = ? WHERE tx_id = ?", [fresh, last.transactionID])
            try tx.execute("UPDATE ps_state SET value = ? WHERE key = 'next_tx'", [fresh + 1])
        } else if next <= last.transactionID {
            try tx.execute("UPDATE ps_state SET value = ? WHERE key = 'next_tx'", [last.transactionID + 1])
        }
    }
}
