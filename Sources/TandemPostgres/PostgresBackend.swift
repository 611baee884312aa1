import Foundation
import Synchronization
import Tandem

/// A backend on PostgreSQL (`postgres://user@host:port/db?sslmode=…` or `host=… dbname=…`, any
/// libpq connection string; `PG*` environment variables fill in what it leaves out). Follows the
/// contract and the conflict rule of every Tandem backend (DESIGN.md): uploads apply once per
/// (client id, transaction id) in one server transaction each batch, marker first; a stale epoch
/// is refused; PUT replaces the row's declared columns, PATCH changes an existing row's columns
/// (a PATCH of a deleted row changes nothing and logs the deletion again), DELETE removes it.
/// Columns the schema does not declare belong to other applications and are never written.
///
/// Downloads read the change log that triggers fill for every row change by anyone (Tandem
/// uploads, `psql`, other applications, `TRUNCATE`) in snapshot batches (``PostgresFeed``): the
/// change committed last wins on every client, and a transaction left open anywhere in the
/// cluster delays only its own changes. A new client, a server restored from a dump, and a
/// client behind the compacted log get a full sync. `LISTEN` is only a wake-up; after every
/// (re)connect the log is read from the cursor. A wait is not woken by this backend's own
/// uploads (the notification names its sender's server process): the owner downloads their
/// answers after uploading anyway. One connection serves uploads, downloads and, once a wait
/// began, `LISTEN`: a client costs the server one connection (and a second for the length of a
/// background compaction).
///
/// Related documentation: https://www.postgresql.org/docs/15/sql-notify.html
public final class PostgresBackend: SyncBackend, @unchecked Sendable {
    // Invariant: the connection and what goes with it are `link`'s, under its mutex; the wait's
    // state is `feedWait`'s; any thread may poke `interrupts` and `wakeups`.
    let conninfo: String
    /// The connection and what goes with it (``withConnection(_:)``).
    private let link: Mutex<Link>
    /// The wait's state, held by ``waitForChanges(after:timeout:)`` for the length of a wait.
    let feedWait: Mutex<FeedWait>
    /// Poked by ``interruptWaits()``: the wait returns.
    let interrupts: SelfPipe
    /// Poked when `news` is raised, when the connection is made again while waits listen, and
    /// when it is lost: the wait takes its turn on the connection.
    let wakeups: SelfPipe
    /// Per client: the last cursor told to the server, when, and a newer one held back since,
    /// so acknowledgements go out at most every 10 seconds.
    let acknowledgements = Mutex<[String: (cursor: String, at: Date, pending: String?)]>([:])
    /// When this process last tried to compact the change log; at first, when the backend was
    /// opened (no compaction in a process's first minute: see ``compactIfDue()``).
    let lastCompaction = Mutex<Date>(Date())
    public let identifier: String
    /// The connection string without a password, for messages and status.
    public let name: String

    /// Connects and reads the server's id, its synced tables' columns and whether row-level
    /// security applies to this login role, and sets the connection up for the feed
    /// (``prepareForFeed(_:)``), in one round trip.
    /// - Parameter lookInterval: the longest a wait for changes goes without looking at the
    ///   feed: a connection a network dropped without a word, or a change that sent no
    ///   notification, shows within it.
    /// - Throws: ``PostgresError`` when the server cannot be reached or was never set up
    ///   (`tandem backend setup`).
    public init(conninfo: String, lookInterval: Duration = .seconds(10)) throws {
        self.conninfo = conninfo
        feedWait = Mutex(FeedWait(lookInterval: lookInterval))
        name = ConnectionString.redacted(conninfo)
        let connection = try PostgresConnection(conninfo)
        var link = Link(connection: connection)
        var serverID: String?
        do {
            let answers = try connection.pipeline(
                [
                    .init(sql: "SELECT value FROM tandem_meta WHERE key = 'server_id'"), .init(sql: PostgresSetup.columnTypesQuery),
                    .init(sql: "SELECT coalesce(row_security_active(to_regclass('tandem_changes')::oid), false)"),
                ] + PostgresBackend.feedSettings)
            serverID = answers[0].first?.first ?? nil
            link.columnTypes = PostgresSetup.columnTypes(from: answers[1])
            link.keptForOlder = PostgresSetup.keptForOlder(from: answers[1])
            // A scoped role's first page is read on its scopes' index, never ahead.
            link.commitsAhead = answers[2].first?.first != "t"
        } catch let error as PostgresError where error.sqlState == "42P01" {
            // undefined_table: Tandem's tables are not there.
        } catch let error as PostgresError where error.sqlState == "42501" {
            throw PostgresError(
                "\(name): this login role may not read Tandem's tables; the administrator gives it scopes and the privileges a client needs with \(Remedy.grantScopes.apiTerms) (\(error.message))",
                remedy: .grantScopes)
        }
        guard let id = serverID else {
            // Unavailable until set up: an app waits for it, as for a server that is down.
            throw PostgresError(
                "\(name) is not set up as a Tandem backend; run \(Remedy.setUpServer.apiTerms) with the schema first", isConnectionFailure: true, remedy: .setUpServer)
        }
        identifier = id
        self.link = Mutex(link)
        interrupts = try SelfPipe()
        wakeups = try SelfPipe()
    }

    static func serverID(on connection: PostgresConnection) throws -> String? {
        let exists = try connection.execute("SELECT to_regclass('tandem_meta') IS NOT NULL")
        guard exists.first?.first == "t" else { return nil }
        return try connection.execute("SELECT value FROM tandem_meta WHERE key = 'server_id'").first?.first ?? nil
    }

    /// Creates or upgrades the server side for `schema` (see ``PostgresSetup``).
    /// - Parameter retention: how long a client may stay away before the change log is
    ///   compacted past its cursor (it then does a full sync); nil keeps the setting (7 days at
    ///   first). At least ``minimumRetention``: running clients report their positions every
    ///   minute, and a shorter retention would compact past clients that are running.
    /// - Parameter contract: the schema's column renames (``Migration/Step/renameColumn(table:from:to:)``)
    ///   are expanded without it (the new column added, filled, and kept equal to the old one by a
    ///   trigger, both synced, so hosts of both versions sync through the server); with it, once
    ///   every host runs the new schema, the old columns and the trigger are dropped.
    /// - Throws: ``PostgresError`` naming the table and column of what can never sync, or a
    ///   retention shorter than ``minimumRetention``.
    public static func setup(conninfo: String, schema: Schema, retention: Duration? = nil, contract: Bool = false) throws {
        if let retention, !(retention.seconds >= PostgresHistory.minimumRetention) {
            throw PostgresError(
                "a retention of \(retention.seconds.formatted()) s is shorter than the least Tandem supports, \(minimumRetention.seconds.formatted()) s (10 minutes): running clients report their positions every minute, and the change log must keep what a running client has yet to apply"
            )
        }
        try PostgresSetup.install(schema, retention: retention?.seconds, contract: contract, on: PostgresConnection(conninfo))
    }

    /// The shortest retention ``setup(conninfo:schema:retention:)`` takes: 10 minutes.
    public static let minimumRetention = Duration.seconds(PostgresHistory.minimumRetention)

    /// A connection for the feed's and uploads' statements (see ``prepareForFeed(_:)``).
    private func connect() throws -> PostgresConnection {
        let connection = try PostgresConnection(conninfo)
        try PostgresBackend.prepareForFeed(connection)
        return connection
    }

    /// Sets up a connection for the feed's and uploads' statements, which all go by an index: the
    /// planner is told so (`enable_seqscan = off`), since statistics that lag behind a growing
    /// log made it scan the whole log for a newest change it judged common. That setting prices
    /// a scan of a small table (`tandem_clients`) above `jit_above_cost`, and compiling such a
    /// statement took 200 ms where running it takes 0.1 ms: these statements are short, so JIT
    /// compilation is off.
    ///
    /// Related documentation: https://www.postgresql.org/docs/15/jit-decision.html
    static func prepareForFeed(_ connection: PostgresConnection) throws {
        _ = try connection.pipeline(feedSettings)
    }

    /// The settings of ``prepareForFeed(_:)``.
    static let feedSettings: [PostgresConnection.Statement] = [.init(sql: "SET enable_seqscan = off"), .init(sql: "SET jit = off")]

    /// Gives the login role `role` the scope values `scopes` for scoped sync, and the privileges
    /// a Tandem client needs on the backend's tables and functions (see ``PostgresScopes`` and
    /// ``PostgresPrivileges``). Run as the administrator who ran setup; the role must exist
    /// (`CREATE ROLE … LOGIN`). Run it again after setup adds tables.
    /// - Parameter writeGlobal: whether the role may insert, update and delete rows of the
    ///   global (unscoped) tables, which every role shares; false (the default) makes them
    ///   read-only to it, and its uploads that write them are refused (set aside on its host).
    ///   Each grant sets this anew.
    /// - Throws: ``PostgresError`` when the server refuses (the role does not exist, say).
    public static func grant(conninfo: String, role: String, scopes: [String], writeGlobal: Bool = false) throws {
        try PostgresScopes.grant(scopes, to: role, writeGlobal: writeGlobal, on: PostgresConnection(conninfo))
    }

    /// Takes the scope values `scopes` (every one when nil) from the login role `role`; its
    /// clients then sync only what is left of their slice.
    /// - Throws: ``PostgresError`` when the server refuses.
    public static func revoke(conninfo: String, role: String, scopes: [String]?) throws {
        try PostgresScopes.revoke(scopes, from: role, on: PostgresConnection(conninfo))
    }

    /// The connection, reconnected when it was lost (listening again, when waits listen, and
    /// waking the wait, which looks at the feed: notifications were lost with the connection),
    /// with what goes with it. Notifications its statements read are handed to the wait
    /// (``Link/news``).
    func withConnection<T>(_ body: (PostgresConnection, inout Link) throws -> T) throws -> T {
        try link.withLock { link throws -> T in
            if link.connection == nil || link.connection!.isBroken {
                link.connection = try connect()
                link.generation += 1
                link.listening = false
                if link.listenWanted {
                    listen(on: link.connection!, &link)
                    wakeups.poke()
                }
            }
            let db = link.connection!
            defer {
                if link.listening, db === link.connection, let read = try? db.consumeNotifications(), case let found = announcement(read, on: db),
                    found != .nothing
                {
                    link.news = max(link.news, found)
                    link.newsTransactions = Announcement.merged(link.newsTransactions, transactions(read, on: db))
                    wakeups.poke()
                }
            }
            do {
                return try body(db, &link)
            } catch let error as PostgresError where error.isConnectionFailure {
                link.connection = nil
                wakeups.poke()  // a wait polling the lost connection's socket reconnects and looks
                throw error
            }
        }
    }

    /// ``withConnection(_:)`` for a body that needs the connection only.
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try withConnection { db, _ in try body(db) }
    }

    // MARK: Upload

    public func upload(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws {
        try withConnection { db, link in
            let named = transactions.flatMap(\.entries).map { ($0.table, Array(($0.data ?? [:]).keys)) }
            if link.columnTypes == nil
                || named.contains(where: { table, keys in
                    guard let known = link.columnTypes?[table] else { return true }
                    return keys.contains { key in !known.contains { $0.name == key } }
                })
            {
                (link.columnTypes, link.keptForOlder) = try PostgresSetup.columnRegistry(on: db)
            }
            let upload = PostgresUpload(db: db, columns: link.columnTypes ?? [:], keptForOlder: link.keptForOlder)
            // A refused row: the batch again (it was rolled back), one entry at a time, so that
            // the refusal names its table and row.
            func oneAtATime() throws {
                try db.transaction(isolation: PostgresUpload.isolation) {
                    try upload.checkEpoch(epoch, clientID: clientID)
                    for transaction in transactions {
                        guard try upload.mark(transaction, clientID: clientID) else { continue }  // a retry: applied once already
                        for entry in transaction.entries { try upload.apply(entry) }
                    }
                }
            }
            switch try upload.uploadInOneRoundTrip(transactions, clientID: clientID, epoch: epoch) {
            case .applied:
                return
            case .rowRefused:
                try oneAtATime()
            case .leftToStatements:
                do {
                    try db.transaction(isolation: PostgresUpload.isolation) {
                        try upload.checkEpoch(epoch, clientID: clientID)
                        try upload.applyInRuns(try upload.markAll(transactions, clientID: clientID).flatMap(\.entries))
                    }
                } catch let error as PostgresError where error.isPermanent {
                    try oneAtATime()
                }
            }
        }
    }

    // MARK: Download

    public func fetchChanges(after cursor: String, limit: Int) throws -> ChangeBatch {
        let batch = try withConnection { db, link -> ChangeBatch in
            let stored = PostgresCursor(cursor)
            // A settled cursor's first page is read ahead with the position.
            let ahead = stored.flatMap { $0.target == nil && $0.table == nil ? PostgresFeed.firstPageAhead(after: $0, limit: limit) : nil }
            if let stored, let ahead, link.commitsAhead,
                let batch = try fetchCommittingAhead(after: stored, text: cursor, ahead: ahead, limit: limit, on: db, &link)
            {
                return batch
            }
            for _ in 0..<2 {
                // The transaction begins with the position read, in one round trip.
                let found = try db.transaction(beginning: { db in
                    try PostgresFeed.position(on: db, name: name, beginning: Self.fetchBeginning, then: ahead.map { [$0] } ?? [])
                }) { position -> ChangeBatch? in
                    if let page = position.firstPage { link.commitsAhead = page.count < max(1, limit) && !position.scoped }
                    guard position.historyIsCurrent else { return nil }
                    if let reason = PostgresFeed.fullSyncReason(for: stored, text: cursor, at: position) {
                        return try PostgresFeed.fullSyncPage(on: db, cursor: nil, position: position, reason: reason, limit: limit)
                    }
                    if stored!.table != nil {
                        return try PostgresFeed.fullSyncPage(on: db, cursor: stored, position: position, reason: nil, limit: limit)
                    }
                    return try PostgresFeed.page(on: db, cursor: stored!, position: position, limit: limit)
                }
                if let found { return found }
                try PostgresHistory.startNewHistory(on: db)
            }
            throw PostgresError("\(name): the server's history could not be recorded")
        }
        compactIfDue()
        return batch
    }

    /// The statements a fetch's read-only transaction begins with, sent with its position.
    private static let fetchBeginning = [PostgresConnection.begin("REPEATABLE READ READ ONLY"), PostgresFeed.readingSettings]

    /// A fetch in one round trip: the position, the first page read ahead and `COMMIT` in one
    /// pipeline, for the common case of a settled cursor (`stored`, whose text is `text`) whose
    /// changes fit in one page. Returns nil when they do not (a full page, a full sync due, a
    /// scoped role, another history): the caller then fetches in a transaction of its own, and
    /// this backend stops committing ahead until a fetch's first page is short again (a backlog
    /// would read every first page twice).
    private func fetchCommittingAhead(
        after stored: PostgresCursor, text: String, ahead: PostgresConnection.Statement, limit: Int, on db: PostgresConnection, _ link: inout Link
    ) throws -> ChangeBatch? {
        let position: PostgresFeed.Position
        do {
            position = try PostgresFeed.position(on: db, name: name, beginning: Self.fetchBeginning, then: [ahead, .init(sql: "COMMIT")])
        } catch {
            _ = try? db.execute("ROLLBACK")  // a failed statement skipped the COMMIT
            throw error
        }
        guard let page = position.firstPage, page.count < max(1, limit), !position.scoped, position.historyIsCurrent,
            PostgresFeed.fullSyncReason(for: stored, text: text, at: position) == nil
        else {
            link.commitsAhead = false
            return nil
        }
        return try PostgresFeed.page(on: db, cursor: stored, position: position, limit: limit)
    }
}
