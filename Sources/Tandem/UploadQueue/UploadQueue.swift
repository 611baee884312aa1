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
        try read { tx in
            let rows = try tx.fetchAll("""
                SELECT id, tx_id, data FROM ps_crud
                WHERE tx_id IN (SELECT DISTINCT tx_id FROM ps_crud ORDER BY tx_id LIMIT ?)
                ORDER BY tx_id, id
                """, [limit])
            return try UploadQueueRows.group(rows)
        }
    }

    /// Removes uploaded transactions from the queue.
    public func complete(_ transactions: [CrudTransaction]) throws {
        try write { try UploadQueueRows.complete(transactions, in: $0) }
    }
}

enum UploadQueueRows {
    static func group(_ rows: [Row]) throws -> [CrudTransaction] {
        var result: [CrudTransaction] = []
        var current: [CrudEntry] = []
        for row in rows {
            guard let id = row[0].int64Value, let txID = row[1].int64Value, let json = row[2].stringValue else { continue }
            let entry = try CrudEntry(id: id, transactionID: txID, json: json)
            if let last = current.last, last.transactionID != txID {
                result.append(CrudTransaction(transactionID: last.transactionID, entries: current))
                current = []
            }
            current.append(entry)
        }
        if let last = current.last { result.append(CrudTransaction(transactionID: last.transactionID, entries: current)) }
        return result
    }

    /// Deletes the uploaded entries. Entries that a non-Tandem writer appended later under the
    /// same transaction id are moved to a fresh id, so no id is ever uploaded twice.
    static func complete(_ transactions: [CrudTransaction], in tx: Transaction) throws {
        for transaction in transactions {
            try tx.execute("DELETE FROM ps_crud WHERE tx_id = ? AND id <= ?", [transaction.transactionID, transaction.lastEntryID])
            let stray = try tx.scalar("SELECT count(*) FROM ps_crud WHERE tx_id = ?", [transaction.transactionID]).int64Value ?? 0
            let next = try tx.scalar("SELECT next_tx FROM ps_tx WHERE id = 1").int64Value ?? 1
            if stray > 0 {
                try tx.execute("UPDATE ps_crud SET tx_id = ? WHERE tx_id = ?", [next, transaction.transactionID])
            }
            if next <= transaction.transactionID || stray > 0 {
                try tx.execute("UPDATE ps_tx SET next_tx = ? WHERE id = 1", [max(next, transaction.transactionID) + 1])
            }
        }
    }
}
