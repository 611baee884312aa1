/// How far this file's writes got: queued (``Counter/crudLast``), applied by the backend
/// (``Counter/uploaded``), and in the downloaded state (``Counter/synced``), as CRUD entry ids.
struct SyncPositions: Equatable {
    var committed: Int64 = 0
    var uploaded: Int64 = 0
    var synced: Int64 = 0

    /// The positions now (0 for a counter a file does not have yet).
    static func read(in tx: Transaction) throws -> SyncPositions {
        guard try tx.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'ps_state'").int64Value == 1 else {
            return SyncPositions()
        }
        var positions = SyncPositions()
        for row in try tx.fetchAll("SELECT key, value FROM ps_state WHERE key IN (?, ?, ?)", [Counter.crudLast.rawValue, Counter.uploaded.rawValue, Counter.synced.rawValue]) {
            let value = row[1].int64Value ?? 0
            switch row[0].stringValue {
            case Counter.crudLast.rawValue: positions.committed = value
            case Counter.uploaded.rawValue: positions.uploaded = value
            default: positions.synced = value
            }
        }
        return positions
    }

    /// The first transaction set aside with an entry at or before `entry`, or nil.
    static func refusal(through entry: Int64, in tx: Transaction) throws -> RejectedTransaction? {
        try RejectedUploadRows.oldest(through: entry, in: tx)
    }

    /// True while an entry at or before `entry` is still queued.
    static func queued(through entry: Int64, in tx: Transaction) throws -> Bool {
        try tx.scalar("SELECT EXISTS (SELECT 1 FROM ps_crud WHERE id <= ?)", [entry]).int64Value == 1
    }
}
