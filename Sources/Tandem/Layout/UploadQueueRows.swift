import Foundation

/// The upload queue's rows. Transaction ids never decrease in `ps_crud` id order (triggers read
/// `next_tx`, which only grows), so the queue is read from its head by id, with no index on `tx_id`.
enum UploadQueueRows {
    /// The first `limit` whole transactions whose entries come after entry id `after`, fewer
    /// when their entries reach `entryLimit` (the transaction that reaches it is the last).
    static func head(transactions limit: Int, entries entryLimit: Int = .max, after: Int64 = 0, in tx: Transaction) throws -> [CrudTransaction] {
        var result: [CrudTransaction] = []
        var current: [CrudEntry] = []
        var entries = 0
        try tx.connection.forEachRow("SELECT id, tx_id, data FROM ps_crud WHERE id > ? ORDER BY id", [.integer(after)]) { row in
            guard let id = row[0].int64Value, let txID = row[1].int64Value, let json = row[2].stringValue else { return true }
            if let last = current.last, last.transactionID != txID {
                result.append(CrudTransaction(transactionID: last.transactionID, entries: current))
                entries += current.count
                current = []
                if result.count >= limit || entries >= entryLimit { return false }
            }
            current.append(try CrudEntry(id: id, transactionID: txID, json: json))
            return true
        }
        if let last = current.last, result.count < limit, entries < entryLimit {
            result.append(CrudTransaction(transactionID: last.transactionID, entries: current))
        }
        return result
    }

    /// True when the newest entry's transaction id is still the one triggers hand out.
    static func isOpen(in tx: Transaction) throws -> Bool {
        guard let newest = try tx.scalar("SELECT tx_id FROM ps_crud ORDER BY id DESC LIMIT 1").int64Value else { return false }
        let next = try tx.connection.counter(.nextTransaction) ?? 1
        return next <= newest
    }

    /// True when the file holds the upload queue and the counters (a new file's first write
    /// creates them).
    static func exists(in tx: Transaction) throws -> Bool {
        try tx.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('ps_crud', 'ps_state')").int64Value == 2
    }

    /// Moves `next_tx` past every queued entry's transaction id.
    static func seal(in tx: Transaction) throws {
        try tx.executeOwn(
            """
            UPDATE ps_state SET value = (SELECT tx_id + 1 FROM ps_crud ORDER BY id DESC LIMIT 1)
            WHERE key = ? AND value <= (SELECT tx_id FROM ps_crud ORDER BY id DESC LIMIT 1)
            """, [Counter.nextTransaction.rawValue])
    }

    /// The first entry whose transaction id is below the one before it (ids never go back while
    /// the transaction counter only grows), with the two ids; nil when none does.
    static func firstEntryGoingBack(in tx: Transaction) throws -> (entry: Int64, transaction: Int64, before: Int64)? {
        let row = try tx.fetchAll(
            """
            SELECT id, tx_id, previous FROM (SELECT id, tx_id, lag(tx_id) OVER (ORDER BY id) AS previous FROM ps_crud)
            WHERE tx_id < previous ORDER BY id LIMIT 1
            """
        ).first
        guard let row, let entry = row[0].int64Value, let transaction = row[1].int64Value, let before = row[2].int64Value else { return nil }
        return (entry, transaction, before)
    }

    /// Gives the entries from each point where transaction ids go back ids past every id before
    /// it (their grouping and order kept), until none goes back; then seals the queue.
    static func renumberWhereIDsGoBack(in tx: Transaction) throws {
        while let back = try firstEntryGoingBack(in: tx) {
            try tx.executeOwn(
                """
                UPDATE ps_crud SET tx_id = tx_id + (SELECT max(tx_id) FROM ps_crud WHERE id < ?1) - (SELECT min(tx_id) FROM ps_crud WHERE id >= ?1) + 1
                WHERE id >= ?1
                """, [back.entry])
        }
        try seal(in: tx)
    }

    /// The first queued entry's id, or nil for an empty queue.
    static func firstID(in tx: Transaction) throws -> Int64? {
        try tx.scalar("SELECT id FROM ps_crud ORDER BY id LIMIT 1").int64Value
    }

    /// The last queued entry's id, or nil for an empty queue.
    static func lastID(in tx: Transaction) throws -> Int64? {
        try tx.scalar("SELECT id FROM ps_crud ORDER BY id DESC LIMIT 1").int64Value
    }

    /// True when any entry is queued (without counting them).
    static func isEmpty(in tx: Transaction) throws -> Bool {
        try tx.scalar("SELECT NOT EXISTS (SELECT 1 FROM ps_crud)").int64Value == 1
    }

    /// Each entry after id `after` with its row (table, id), in id order.
    static func rows(after: Int64, in tx: Transaction) throws -> [(Int64, RowKey)] {
        try tx.fetchAll("SELECT id, data ->> '$.type', \(TableSchema.text("data", path: "'$.id'")) FROM ps_crud WHERE id > ? ORDER BY id", [after]).compactMap { row in
            row[0].int64Value.map { ($0, RowKey(table: row[1].stringValue ?? "", id: row[2].stringValue ?? "")) }
        }
    }

    /// The number of queued entries.
    static func count(in tx: Transaction) throws -> Int {
        Int(try tx.scalar("SELECT count(*) FROM ps_crud").int64Value ?? 0)
    }

    /// Moves the transaction ids from `first` on up by `shift` (order and grouping kept), and
    /// `next_tx` past them.
    static func renumber(from first: Int64, by shift: Int64, in tx: Transaction) throws {
        try tx.executeOwn("UPDATE ps_crud SET tx_id = tx_id + ? WHERE tx_id >= ?", [shift, first])
        try tx.executeOwn(
            "UPDATE ps_state SET value = max(value + ?, (SELECT tx_id + 1 FROM ps_crud ORDER BY id DESC LIMIT 1)) WHERE key = ?",
            [shift, Counter.nextTransaction.rawValue])
    }

    /// Queues a PUT of every row in `source`'s data table as a row of `table`, except rows the
    /// server changed meanwhile (waiting in ps_untyped).
    static func queuePuts(of table: String, from source: TableSchema, in tx: Transaction) throws {
        // Ids numbered from the next one here: one INSERT … SELECT reads `ps_crud` once.
        try tx.executeOwn(
            """
            INSERT INTO ps_crud(id, tx_id, data) SELECT ? + row_number() OVER (ORDER BY rowid), \(InternalTables.nextTransactionID),
            json_object('op', 'PUT', 'type', ?, 'id', id, 'data', json(data)) FROM \(source.quotedDataTable)
            WHERE NOT \(UntypedRows.waitingCondition)
            """, [try nextID(on: tx.connection) - 1, table, table])
        try tx.connection.execute(InternalTables.recordLastCrudID)
    }

    /// Deletes the uploaded entries: every entry up to the batch's last id (ids only grow, so no
    /// later entry has a smaller one, and sealed transaction ids gain no later entries).
    static func complete(_ transactions: [CrudTransaction], in tx: Transaction) throws {
        guard let last = transactions.last else { return }
        try tx.executeOwn("DELETE FROM ps_crud WHERE id <= ?", [last.lastEntryID])
        try tx.connection.raiseCounter(.uploaded, to: last.lastEntryID)
    }

    /// Removes every queued entry.
    static func clear(in tx: Transaction) throws {
        try tx.executeOwn("DELETE FROM ps_crud")
    }

    /// Brings ``Counter/crudLast`` up to every id the queue holds or ever gave (and back, if it
    /// was missing): the queue's highest id, and for a database made with the `AUTOINCREMENT`
    /// queue the highest id that table ever gave (`sqlite_sequence`). Run when the layout is
    /// installed or upgraded, when a writer opens a file whose counter is behind, at repair, and
    /// before bulk inserts, which set ids themselves.
    static func seedLastID(on connection: Connection) throws {
        try connection.execute(InternalTables.seedLastCrudID)
        guard try connection.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'").int64Value == 1 else { return }
        try connection.execute(
            """
            UPDATE ps_state SET value = (SELECT seq FROM sqlite_sequence WHERE name = 'ps_crud')
            WHERE key = ? AND value < coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'ps_crud'), 0)
            """, [.text(Counter.crudLast.rawValue)])
    }

    /// True when ``Counter/crudLast`` is missing or below the queue's highest id.
    static func lastIDIsBehind(on connection: Connection) throws -> Bool {
        try connection.scalar(
            """
            SELECT coalesce((SELECT value FROM ps_state WHERE key = '\(Counter.crudLast.rawValue)') < (SELECT coalesce(max(id), 0) FROM ps_crud), 1)
            """
        ).int64Value == 1
    }

    /// The id the next CRUD entry gets, after ``seedLastID(on:)``.
    static func nextID(on connection: Connection) throws -> Int64 {
        try seedLastID(on: connection)
        return (try connection.counter(.crudLast) ?? 0) + 1
    }

}
