import Foundation
import Synchronization
import Tandem

/// A backend on PostgreSQL (`postgres://user@host:port/db?sslmode=…`, any libpq connection
/// string; `PG*` environment variables fill in what it leaves out). Follows the contract and the
/// conflict rule of every Tandem backend (DESIGN.md): uploads apply once per (client id,
/// transaction id) in one server transaction each batch, marker first; a stale epoch is refused;
/// PUT replaces the row, PATCH changes an existing row's columns (a PATCH of a deleted row
/// changes nothing and logs the deletion again), DELETE removes it.
///
/// Downloads read the change log that triggers fill for every row change by anyone (Tandem
/// uploads, `psql`, other applications) by (transaction id, version) below the snapshot's xmin,
/// so a transaction that commits late is never skipped and whole transactions arrive together.
/// `LISTEN` is only a wake-up; after every (re)connect the log is read from the cursor.
///
/// Related documentation: https://www.postgresql.org/docs/15/sql-notify.html
public final class PostgresBackend: SyncBackend, @unchecked Sendable {
    // Invariant: `connection` is used only with `lock` held; `listener` only by the one thread
    // in waitForChanges at a time; `interrupts` is a pipe any thread may write to.
    private let conninfo: String
    private let lock = NSLock()
    private var connection: PostgresConnection?
    private var listener: PostgresConnection?
    private var listening = false
    /// The server's synced tables and column types, read once (and again when an upload names a
    /// table or column not in it, after a `tandem backend setup`); guarded by `lock`.
    private var columnTypes: [String: [String: ColumnSchema.ColumnType]]?
    private let interrupts: (Int32, Int32)
    public let identifier: String
    /// The connection string without a password, for messages and status.
    public let name: String

    /// Connects and reads the server's id.
    /// - Throws: ``PostgresError`` when the server cannot be reached or was never set up
    ///   (`tandem backend setup`).
    public init(conninfo: String) throws {
        self.conninfo = conninfo
        name = PostgresConnection.redacted(conninfo)
        let connection = try PostgresConnection(conninfo)
        guard let id = try PostgresBackend.serverID(on: connection) else {
            throw PostgresError("\(name) is not set up as a Tandem backend; run `tandem backend setup` with the schema first")
        }
        identifier = id
        self.connection = connection
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        for fd in fds { _ = fcntl(fd, F_SETFL, O_NONBLOCK); _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        interrupts = (fds[0], fds[1])
    }

    deinit {
        close(interrupts.0)
        close(interrupts.1)
    }

    static func serverID(on connection: PostgresConnection) throws -> String? {
        let exists = try connection.execute("SELECT to_regclass('tandem_meta') IS NOT NULL")
        guard exists.first?.first == "t" else { return nil }
        return try connection.execute("SELECT value FROM tandem_meta WHERE key = 'server_id'").first?.first ?? nil
    }

    /// Creates or upgrades the server side for `schema` (see ``PostgresSetup``).
    public static func setup(conninfo: String, schema: Schema) throws {
        try PostgresSetup.install(schema, on: PostgresConnection(conninfo))
    }

    /// The main connection, reconnected when it was lost.
    private func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        if connection == nil || connection!.isBroken { connection = try PostgresConnection(conninfo) }
        do {
            return try body(connection!)
        } catch let error as PostgresError where error.isConnectionFailure {
            connection = nil
            throw error
        }
    }

    // MARK: Upload

    public func upload(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws {
        try withConnection { db in
            let named = transactions.flatMap(\.entries).map { ($0.table, Array(($0.data ?? [:]).keys)) }
            if columnTypes == nil || named.contains(where: { table, keys in
                guard let known = columnTypes?[table] else { return true }
                return keys.contains { known[$0] == nil }
            }) {
                columnTypes = try PostgresSetup.columnTypes(on: db)
            }
            let columns = columnTypes ?? [:]
            try db.transaction {
                let seen = Int64(try db.execute("SELECT epoch FROM tandem_clients WHERE client_id = $1 FOR UPDATE", [clientID]).first?.first??.description ?? "0") ?? 0
                guard epoch >= seen else { throw TandemError.staleEpoch(held: epoch, current: seen) }
                try db.execute("""
                    INSERT INTO tandem_clients(client_id, epoch) VALUES ($1, $2)
                    ON CONFLICT (client_id) DO UPDATE SET epoch = greatest(tandem_clients.epoch, EXCLUDED.epoch)
                    """, [clientID, String(epoch)])
                for transaction in transactions {
                    let digest = transaction.digest
                    let marked = try db.execute("""
                        INSERT INTO tandem_uploads(client_id, tx_id, digest) VALUES ($1, $2, $3)
                        ON CONFLICT DO NOTHING RETURNING 1
                        """, [clientID, String(transaction.transactionID), digest])
                    if marked.isEmpty {
                        let applied = try db.execute("SELECT digest FROM tandem_uploads WHERE client_id = $1 AND tx_id = $2",
                                                     [clientID, String(transaction.transactionID)]).first?.first ?? nil
                        if applied == digest { continue }  // a retry: applied once already
                        let highest = Int64(try db.execute("SELECT max(tx_id) FROM tandem_uploads WHERE client_id = $1", [clientID]).first?.first??.description ?? "0") ?? 0
                        throw TandemError.transactionConflict(clientID: clientID, transactionID: transaction.transactionID, highest: highest)
                    }
                    for entry in transaction.entries { try apply(entry, columns: columns, on: db) }
                }
            }
        }
    }

    private func apply(_ entry: CrudEntry, columns: [String: [String: ColumnSchema.ColumnType]], on db: PostgresConnection) throws {
        guard let types = columns[entry.table] else {
            throw TandemError.uploadRejected(table: entry.table, rowID: entry.rowID, reason: "the server has no synced table \(entry.table); run `tandem backend setup` with the current schema")
        }
        let table = SQLText.identifier(entry.table)
        switch entry.op {
        case .delete:
            try db.execute("DELETE FROM \(table) WHERE id = $1", [entry.rowID])
        case .put:
            let names = types.keys.sorted()
            let values = try names.map { try PostgresValues.text(entry.data?[$0] ?? .null, column: $0, type: types[$0]!, entry: entry) }
            for key in (entry.data ?? [:]).keys where types[key] == nil { try PostgresValues.unknownColumn(key, entry: entry) }
            let list = (["id"] + names.map(SQLText.identifier)).joined(separator: ", ")
            let marks = (1...(names.count + 1)).map { "$\($0)" }.joined(separator: ", ")
            let updates = names.map { "\(SQLText.identifier($0)) = EXCLUDED.\(SQLText.identifier($0))" }.joined(separator: ", ")
            try db.execute("INSERT INTO \(table)(\(list)) VALUES (\(marks)) ON CONFLICT (id) DO UPDATE SET \(updates.isEmpty ? "id = EXCLUDED.id" : updates)",
                           [entry.rowID] + values)
        case .patch:
            let data = entry.data ?? [:]
            let names = data.keys.sorted()
            for name in names where types[name] == nil { try PostgresValues.unknownColumn(name, entry: entry) }
            let values = try names.map { try PostgresValues.text(data[$0]!, column: $0, type: types[$0]!, entry: entry) }
            let sets = names.enumerated().map { "\(SQLText.identifier($1)) = $\($0 + 2)" }.joined(separator: ", ")
            let updated = try db.execute("UPDATE \(table) SET \(sets.isEmpty ? "id = id" : sets) WHERE id = $1 RETURNING 1", [entry.rowID] + values)
            if updated.isEmpty {
                // The delete wins: tell the patching client its row is gone.
                try db.execute("INSERT INTO tandem_changes(op, type, id) VALUES ('DELETE', $1, $2)", [entry.table, entry.rowID])
            }
        }
    }

    // MARK: Download

    /// Cursors are `xid:version` of the last change applied (`""` for the beginning).
    private func parse(_ cursor: String) throws -> (String, String) {
        if cursor.isEmpty { return ("0", "0") }
        let parts = cursor.split(separator: ":").map(String.init)
        guard parts.count == 2, UInt64(parts[0]) != nil, Int64(parts[1]) != nil else {
            throw TandemError.invalidBackend("the stored cursor '\(cursor)' is not a cursor of the PostgreSQL backend \(name)")
        }
        return (parts[0], parts[1])
    }

    private static let visible = "xid < pg_snapshot_xmin(pg_current_snapshot())"

    public func fetchChanges(after cursor: String, limit: Int) throws -> ChangeBatch {
        let (xid, version) = try parse(cursor)
        return try withConnection { db in
            try db.transaction {
                try db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                var rows = try db.execute("""
                    SELECT xid::text, version, op, type, id, data FROM tandem_changes
                    WHERE (xid, version) > ($1::xid8, $2::bigint) AND \(PostgresBackend.visible)
                    ORDER BY xid, version LIMIT $3
                    """, [xid, version, String(max(1, limit))])
                guard let last = rows.last, let lastXID = last[0], let lastVersion = last[1] else {
                    return ChangeBatch(changes: [], nextCursor: cursor, hasMore: false)
                }
                // Never split a server transaction across batches.
                rows += try db.execute("SELECT xid::text, version, op, type, id, data FROM tandem_changes WHERE xid = $1::xid8 AND version > $2 ORDER BY version",
                                       [lastXID, lastVersion])
                let end = rows.last!
                let next = "\(end[0]!):\(end[1]!)"
                let more = try db.execute("""
                    SELECT EXISTS (SELECT 1 FROM tandem_changes WHERE (xid, version) > ($1::xid8, $2::bigint) AND \(PostgresBackend.visible))
                    """, [end[0]!, end[1]!]).first?.first == "t"
                let changes = rows.map { row in
                    ServerChange(op: row[2] == "DELETE" ? .delete : .put, table: row[3] ?? "", rowID: row[4] ?? "", data: row[5] ?? nil)
                }
                return ChangeBatch(changes: changes, nextCursor: next, hasMore: more)
            }
        }
    }

    /// True while some logged change is not visible yet (a transaction older than it, anywhere in
    /// the cluster, is still open); such changes arrive once it ends.
    func hasChangesAwaitingVisibility() throws -> Bool {
        try withConnection { db in
            try db.execute("SELECT EXISTS (SELECT 1 FROM tandem_changes WHERE NOT (\(PostgresBackend.visible)))").first?.first == "t"
        }
    }

    // MARK: Push

    public func waitForChanges(after cursor: String, timeout: Double) throws -> String? {
        let (xid, version) = try parse(cursor)
        let deadline = Date(timeIntervalSinceNow: timeout)
        var drained: UInt8 = 0
        while read(interrupts.0, &drained, 1) > 0 {}  // a new wait starts uninterrupted
        while true {
            if listener == nil || listener!.isBroken {
                let connection = try PostgresConnection(conninfo)
                // A pooler in transaction mode cannot LISTEN: then this polls every second.
                listening = (try? connection.execute("LISTEN \(PostgresSetup.channel)")) != nil
                listener = connection
            }
            let db = listener!
            // After every (re)connect and wake-up, read from the cursor: notifications are wake-ups only.
            let found = try db.execute("""
                SELECT (SELECT xid::text || ':' || version FROM tandem_changes
                        WHERE (xid, version) > ($1::xid8, $2::bigint) AND \(PostgresBackend.visible)
                        ORDER BY xid DESC, version DESC LIMIT 1),
                       EXISTS (SELECT 1 FROM tandem_changes WHERE (xid, version) > ($1::xid8, $2::bigint))
                """, [xid, version]).first
            if let newest = found?[0] ?? nil { return newest }
            // Changes committed but not visible yet (an older transaction anywhere in the cluster
            // is still open): no further notification will come for them, so look again soon.
            let waitingForVisibility = found?[1] == "t"
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return nil }
            var fds = [pollfd(fd: listening ? db.socket : -1, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: interrupts.0, events: Int16(POLLIN), revents: 0)]
            let slice = waitingForVisibility ? 0.02 : listening ? remaining : 1
            let milliseconds = Int32(min(remaining, slice) * 1000) + 1
            let n = poll(&fds, 2, milliseconds)
            if n > 0 && fds[1].revents != 0 { return nil }
            if n > 0 && fds[0].revents != 0 { _ = try db.consumeNotifications() }
        }
    }

    public func interruptWaits() {
        var one: UInt8 = 1
        _ = write(interrupts.1, &one, 1)
    }
}
