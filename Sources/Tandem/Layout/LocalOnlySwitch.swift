/// What a table's switch to local-only does to its changes still waiting for upload (in the
/// upload queue, or set aside after the backend refused them): none leaves the host any more.
///
/// A synced table's pending entries are withdrawn (its rows, already here, stay as they are). An
/// insert-only table keeps no rows, so its pending inserts would otherwise be lost: each becomes
/// a row of the local-only table, as its PUT carried it, and the entry is withdrawn.
enum LocalOnlySwitch {
    /// The entries of `table` waiting for upload (queued or set aside).
    static func pendingEntries(of table: String, in tx: Transaction) throws -> Int {
        var count = try tx.scalar("SELECT count(*) FROM ps_crud WHERE data ->> '$.type' = ?", [table]).int64Value ?? 0
        if try RejectedUploadRows.exists(in: tx) {
            count += try tx.scalar("SELECT count(*) FROM ps_crud_rejected WHERE data ->> '$.type' = ?", [table]).int64Value ?? 0
        }
        return Int(count)
    }

    /// Withdraws `table`'s pending entries; when it was insert-only, its pending inserts first
    /// become rows of `table`'s (local-only) data table, in queue order.
    static func keepOnHost(_ table: TableSchema, wasInsertOnly: Bool, in tx: Transaction) throws {
        var queues = ["ps_crud"]
        if try RejectedUploadRows.exists(in: tx) { queues.append("ps_crud_rejected") }
        for queue in queues {
            if wasInsertOnly {
                try tx.executeOwn(
                    """
                    INSERT OR REPLACE INTO \(table.quotedDataTable)(id, data)
                    SELECT data ->> '$.id', json(data -> '$.data') FROM \(queue)
                    WHERE data ->> '$.type' = ? AND data ->> '$.op' = 'PUT' AND json_type(data, '$.data') = 'object' ORDER BY id
                    """, [table.name])
            }
            try tx.executeOwn("DELETE FROM \(queue) WHERE data ->> '$.type' = ?", [table.name])
        }
    }
}
