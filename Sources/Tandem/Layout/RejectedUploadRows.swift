import Foundation

/// `ps_crud_rejected`: transactions the backend refused for good (a value its column cannot
/// take, a constraint, a permission), set aside from the upload queue with the server's error so
/// that later uploads and downloads go on. Nothing here is dropped but by the user's discard.
enum RejectedUploadRows {
    static let ddl = """
        CREATE TABLE IF NOT EXISTS ps_crud_rejected(id INTEGER PRIMARY KEY, tx_id INTEGER NOT NULL, data TEXT NOT NULL,
            error TEXT NOT NULL, rejected_at REAL NOT NULL)
        """

    /// Moves `transaction`'s entries from the queue here, with `error`.
    static func setAside(_ transaction: CrudTransaction, error: String, in tx: Transaction) throws {
        try tx.executeOwn(ddl)
        let ids = transaction.entries.map { JSONValue.integer($0.id) }
        try tx.executeOwn(
            """
            INSERT OR REPLACE INTO ps_crud_rejected(id, tx_id, data, error, rejected_at)
            SELECT id, tx_id, data, ?, ? FROM ps_crud WHERE id IN (SELECT value FROM json_each(?))
            """, [error, Date().timeIntervalSince1970, JSONValue.array(ids).jsonText])
        try tx.executeOwn("DELETE FROM ps_crud WHERE id IN (SELECT value FROM json_each(?))", [JSONValue.array(ids).jsonText])
    }

    /// Every transaction set aside, oldest first.
    static func all(in tx: Transaction) throws -> [RejectedTransaction] {
        try transactions(where: "1", in: tx)
    }

    /// The transaction set aside last, if any.
    static func newest(in tx: Transaction) throws -> RejectedTransaction? {
        guard try exists(in: tx) else { return nil }
        let newest = "tx_id = (SELECT tx_id FROM ps_crud_rejected ORDER BY rejected_at DESC, id DESC LIMIT 1)"
        return try transactions(where: newest, in: tx).last
    }

    /// The oldest transaction set aside that holds an entry with an id at or before `entry`.
    static func oldest(through entry: Int64, in tx: Transaction) throws -> RejectedTransaction? {
        guard try exists(in: tx) else { return nil }
        return try transactions(where: "tx_id = (SELECT tx_id FROM ps_crud_rejected WHERE id <= \(entry) ORDER BY id LIMIT 1)", in: tx).first
    }

    /// The transactions set aside whose rows match `condition`, oldest first.
    private static func transactions(where condition: String, in tx: Transaction) throws -> [RejectedTransaction] {
        guard try exists(in: tx) else { return [] }
        var result: [RejectedTransaction] = []
        for row in try tx.fetchAll("SELECT id, tx_id, data, error, rejected_at FROM ps_crud_rejected WHERE \(condition) ORDER BY id") {
            guard let id = row[0].int64Value, let txID = row[1].int64Value, let json = row[2].stringValue else { continue }
            let entry = try CrudEntry(id: id, transactionID: txID, json: json)
            if let last = result.last, last.transaction.transactionID == txID {
                result[result.count - 1].transaction = CrudTransaction(transactionID: txID, entries: last.transaction.entries + [entry])
            } else {
                result.append(
                    RejectedTransaction(
                        transaction: CrudTransaction(transactionID: txID, entries: [entry]),
                        error: row[3].stringValue ?? "",
                        rejectedAt: Date(timeIntervalSince1970: row[4].doubleValue ?? 0)))
            }
        }
        return result
    }

    /// The number of transactions set aside.
    static func count(in tx: Transaction) throws -> Int {
        guard try exists(in: tx) else { return 0 }
        return Int(try tx.scalar("SELECT count(DISTINCT tx_id) FROM ps_crud_rejected").int64Value ?? 0)
    }

    /// Queues transaction `transactionID` (every one when nil) again, at the end of the queue
    /// under a new transaction id each, its entries in their order.
    /// - Returns: how many transactions were queued again.
    static func requeue(_ transactionID: Int64?, in tx: Transaction) throws -> Int {
        guard try exists(in: tx) else { return 0 }
        let chosen = try tx.fetchAll(
            "SELECT DISTINCT tx_id FROM ps_crud_rejected WHERE ?1 IS NULL OR tx_id = ?1 ORDER BY tx_id",
            [transactionID.map(DatabaseValue.integer) ?? .null]
        ).compactMap { $0[0].int64Value }
        for rejected in chosen {
            try UploadQueueRows.seal(in: tx)
            let next = try UploadQueueRows.nextID(on: tx.connection)
            try tx.executeOwn(
                """
                INSERT INTO ps_crud(id, tx_id, data)
                SELECT ? + row_number() OVER (ORDER BY id) - 1, \(InternalTables.nextTransactionID), data FROM ps_crud_rejected WHERE tx_id = ?
                """, [next, rejected])
            try tx.connection.execute(InternalTables.recordLastCrudID)
            try UploadQueueRows.seal(in: tx)
            try tx.executeOwn("DELETE FROM ps_crud_rejected WHERE tx_id = ?", [rejected])
        }
        return chosen.count
    }

    /// Drops transaction `transactionID` (every one when nil) for good.
    /// - Returns: how many entries were dropped.
    static func discard(_ transactionID: Int64?, in tx: Transaction) throws -> Int {
        guard try exists(in: tx) else { return 0 }
        let dropped = Int(
            try tx.scalar(
                "SELECT count(*) FROM ps_crud_rejected WHERE ?1 IS NULL OR tx_id = ?1",
                [transactionID.map(DatabaseValue.integer) ?? .null]
            ).int64Value ?? 0)
        try tx.executeOwn("DELETE FROM ps_crud_rejected WHERE ?1 IS NULL OR tx_id = ?1", [transactionID.map(DatabaseValue.integer) ?? .null])
        return dropped
    }

    /// Files made before set-aside uploads existed have no table until the first one.
    static func exists(in tx: Transaction) throws -> Bool {
        try tx.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'ps_crud_rejected'").int64Value == 1
    }
}
