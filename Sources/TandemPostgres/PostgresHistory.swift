import Foundation
import Tandem

/// The server's history and the change log's retention.
///
/// **History.** Clients' cursors hold transaction ids, which mean something only in the cluster
/// that assigned them. `tandem_meta.history` is `<xid>/<uuid>`, written by the transaction
/// `<xid>`, so the row's own `xmin` equals it; a dump restored into another cluster (a migration,
/// a managed-service move) writes the row again under another `xmin`, which tells the backend
/// that every cursor of the old history is void. It then starts a new history (a new uuid, the
/// old history's change log removed) and every client does a full sync, keeping its pending
/// uploads. `VACUUM FREEZE`, `VACUUM FULL`, `CLUSTER` and `pg_upgrade` keep `xmin`.
///
/// **Retention.** Each client acknowledges the cursor it applied (`tandem_clients.cursor_xmin`,
/// `seen_at`). Compaction deletes the changes of transactions below a horizon: the oldest cursor of
/// the clients seen within the retention period (7 days unless `tandem_meta.retention_seconds`
/// says otherwise), never newer than the oldest running transaction, and, when run in the
/// background, never newer than the one the previous run chose (at least a grace period ago,
/// which covers a new client's first full sync before its first acknowledgement). A client whose
/// cursor is below the horizon gets a full sync.
///
/// Related documentation: https://www.postgresql.org/docs/15/ddl-system-columns.html
enum PostgresHistory {
    static let defaultRetention: Double = 7 * 24 * 3600
    /// The least time between a background compaction's choice of a horizon and its use.
    static let grace: Double = 300
    /// The least time between two background compactions of one process, and between its
    /// backend's opening and its first (seconds).
    static let interval: Double = 60
    /// A running client reports its position at least this often, idle or not (seconds): the
    /// 10-second wait for changes ends, and sends it again when the last is this old.
    static let heartbeat: Double = 60
    /// The shortest retention the reports support (seconds): ten heartbeats. Setup refuses a
    /// shorter one, and compaction reads a shorter one stored before as this.
    static let minimumRetention: Double = 600

    /// Starts a new history after the old one's row was found restored: a new id, the old
    /// history's change log and client positions removed, in one transaction (`tandem_new_history()`,
    /// which runs as the administrator, so a scoped role's client can start it too).
    static func startNewHistory(on db: PostgresConnection) throws {
        try db.execute("SELECT tandem_new_history()")
    }

    /// Deletes the changes every client has applied (see the type). With `immediately`, the horizon
    /// is the one chosen now; otherwise the one the previous run chose at least ``grace`` ago.
    /// - Returns: the number of changes deleted, or nil when another compaction was running.
    @discardableResult
    static func compact(on db: PostgresConnection, immediately: Bool) throws -> Int? {
        try db.transaction { () -> Int? in
            guard try db.execute("SELECT pg_try_advisory_xact_lock(7340979)").first?.first == "t" else { return nil }
            let row =
                try db.execute(
                    """
                    SELECT pg_snapshot_xmin(pg_current_snapshot())::text,
                           (SELECT min(cursor_xmin)::text FROM tandem_clients WHERE cursor_xmin IS NOT NULL
                              AND seen_at > now() - make_interval(secs => greatest(coalesce((SELECT value::float8 FROM tandem_meta WHERE key = 'retention_seconds'), $1), $2))),
                           (SELECT value FROM tandem_meta WHERE key = 'compaction'),
                           extract(epoch FROM now())::text
                    """, [String(defaultRetention), String(minimumRetention)]
                ).first ?? []
            guard row.count == 4, let oldest = row[0].flatMap({ $0 }).flatMap(UInt64.init), let now = row[3].flatMap({ $0 }).flatMap(Double.init) else { return 0 }
            let clients = row[1].flatMap { $0 }.flatMap(UInt64.init)
            let candidate = min(oldest, clients ?? oldest)
            var horizon: UInt64?
            if immediately {
                horizon = candidate
            } else if let previous = row[2].flatMap({ $0 }) {
                let parts = previous.split(separator: "@")
                if parts.count == 2, let xid = UInt64(parts[0]), let at = Double(parts[1]), now - at >= grace { horizon = min(xid, candidate) }
            }
            if immediately || horizon != nil || row[2] == nil {
                try db.execute(
                    "INSERT INTO tandem_meta(key, value) VALUES ('compaction', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                    ["\(candidate)@\(now)"])
            }
            guard let horizon else { return 0 }
            let deleted =
                try db.execute(
                    "WITH gone AS (DELETE FROM tandem_changes WHERE xid < $1::xid8 RETURNING 1) SELECT count(*) FROM gone",
                    [String(horizon)]
                ).first?.first.flatMap { $0 }.flatMap { Int($0) } ?? 0
            try db.execute(
                """
                INSERT INTO tandem_meta(key, value) VALUES ('horizon', $1)
                ON CONFLICT (key) DO UPDATE SET value = greatest(tandem_meta.value::numeric, EXCLUDED.value::numeric)::text
                """, [String(horizon)])
            return deleted
        }
    }
}

extension PostgresBackend {
    /// Records the cursor `clientID` applied, at most every 10 seconds per client (unless its
    /// snapshot's xmin moved back); one held back meanwhile goes out when a wait for changes
    /// ends, so an idle client's latest cursor is known within about 10 seconds.
    public func acknowledge(cursor: String, clientID: String) throws {
        guard let parsed = PostgresCursor(cursor), parsed.target == nil, parsed.table == nil else { return }
        let now = Date()
        let due = acknowledgements.withLock { known -> Bool in
            let last = known[clientID]
            let due = last.map { now.timeIntervalSince($0.at) >= 10 || (PostgresCursor($0.cursor)?.settled.xmin ?? 0) > parsed.settled.xmin } ?? true
            if !due { known[clientID]?.pending = cursor }
            return due
        }
        guard due else { return }
        try record(cursor: parsed, clientID: clientID)
        acknowledgements.withLock { $0[clientID] = (cursor, now, nil) }
    }

    /// Sends the acknowledgements held back for at least 10 seconds, and sends again each
    /// client's last one sent ``PostgresHistory/heartbeat`` or more before `now` (an idle client
    /// applies nothing, yet its position must keep holding the horizon while it runs).
    func flushAcknowledgements(now: Date = Date()) {
        let due = acknowledgements.withLock { known in
            known.compactMap { client, last -> (String, String)? in
                let age = now.timeIntervalSince(last.at)
                if let pending = last.pending, age >= 10 { return (client, pending) }
                return age >= PostgresHistory.heartbeat ? (client, last.cursor) : nil
            }
        }
        for (clientID, cursor) in due {
            guard let parsed = PostgresCursor(cursor), (try? record(cursor: parsed, clientID: clientID)) != nil else { continue }
            acknowledgements.withLock { $0[clientID] = (cursor, now, nil) }
        }
    }

    private func record(cursor: PostgresCursor, clientID: String) throws {
        _ = try withConnection { db in
            try db.execute(
                """
                INSERT INTO tandem_clients(client_id, epoch, cursor_xmin, seen_at) VALUES ($1, 0, $2::xid8, now())
                ON CONFLICT (role, client_id) DO UPDATE SET cursor_xmin = EXCLUDED.cursor_xmin, seen_at = EXCLUDED.seen_at
                """, [clientID, String(cursor.settled.xmin)])
        }
    }

    /// Deletes the change log's entries that every client has applied, now (see ``PostgresHistory``).
    /// - Returns: the number of changes deleted (0 when another compaction was running).
    /// - Throws: ``PostgresError`` when the server cannot be reached.
    public func compact() throws -> Int {
        try withConnection { db in
            let deleted = try PostgresHistory.compact(on: db, immediately: true) ?? 0
            // Space for new changes, and the table's file cut back where its end is empty
            // (autovacuum does the first in the background).
            if deleted > 0 { try db.execute("VACUUM tandem_changes") }
            return deleted
        }
    }

    /// Whether a background compaction is due at `now`, at least ``PostgresHistory/interval``
    /// after the last one (or the backend's opening); `now` is then recorded as the last.
    func compactionIsDue(at now: Date) -> Bool {
        lastCompaction.withLock { last -> Bool in
            guard now.timeIntervalSince(last) >= PostgresHistory.interval else { return false }
            last = now
            return true
        }
    }

    /// Compacts in the background of downloads, at most once a minute per process and not in
    /// its first minute, on a thread and a connection of its own: a compaction that deletes
    /// many changes never holds up the download that started it, and an app that starts (with
    /// its first downloads, often a backlog's) does not pay for a second connection then. A
    /// process that syncs once and exits leaves compaction to the apps that run on, or to
    /// `tandem backend compact`.
    func compactIfDue() {
        guard compactionIsDue(at: Date()) else { return }
        let conninfo = conninfo
        Thread.detachNewThread {
            guard let db = try? PostgresConnection(conninfo), (try? PostgresBackend.prepareForFeed(db)) != nil else { return }
            _ = try? PostgresHistory.compact(on: db, immediately: false)
        }
    }
}
