import Foundation

/// The zero-set-up backend: a server database file on this host that any number of client
/// databases sync through (`sqlite:/path/server.db`).
///
/// The server file is itself a Tandem database (WAL, cross-process write lock, `<server>-notify`
/// wake-ups), holding:
/// - `server_rows(type, id, data)`: the current state of every row;
/// - `server_changes(version, txn, op, type, id, data)`: the change log, `version` increasing
///   in commit order, each entry the row's full state after an uploaded transaction;
/// - `server_uploads(client_id, tx_id, txn)`: applied (client id, transaction id) pairs, so a
///   repeated upload has no second effect;
/// - `server_clients(client_id, epoch)`: the newest owner epoch seen per client; older epochs are refused.
public final class EmbeddedBackend: SyncBackend, @unchecked Sendable {
    // Invariant: `generation`, `interruptions`, `ownUploads` and `lastRead` are read and written
    // only with `changed` locked; everything else is set in init and never changes.
    let database: SharedDatabase
    private let changed = NSCondition()
    /// Counts the commits that touched the change log (and interruptions), for waits.
    private var generation = 0
    /// Counts ``interruptWaits()`` calls; a wait that sees it change returns early.
    private var interruptions = 0
    /// The versions of the change log this object's own uploads wrote (ascending, adjacent
    /// ones merged), which wake no wait: the owner downloads their answers itself.
    private var ownUploads: [ClosedRange<Int64>] = []
    private var token: AnyDatabaseCancellable?
    private var wakeUpToken: AnyDatabaseCancellable?
    /// The newest version a wait read, and ``generation`` as it was before that read: while
    /// `generation` has not moved, no commit has touched the change log since (a wait that
    /// starts again after returning need not read it again).
    private var lastRead: (generation: Int, newest: Int64)?
    private let serverID: String

    static let ddl = """
        CREATE TABLE IF NOT EXISTS server_rows(type TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY(type, id));
        CREATE TABLE IF NOT EXISTS server_changes(version INTEGER PRIMARY KEY AUTOINCREMENT, txn INTEGER NOT NULL,
            op TEXT NOT NULL, type TEXT NOT NULL, id TEXT NOT NULL, data TEXT);
        CREATE TABLE IF NOT EXISTS server_uploads(client_id TEXT NOT NULL, tx_id INTEGER NOT NULL, txn INTEGER NOT NULL,
            digest TEXT NOT NULL, PRIMARY KEY(client_id, tx_id));
        CREATE TABLE IF NOT EXISTS server_clients(client_id TEXT PRIMARY KEY NOT NULL, epoch INTEGER NOT NULL);
        """

    /// Opens or creates the server database at `path`, through Tandem's public API only (as any
    /// backend outside Tandem would be written): the file is surveyed read-only first
    /// (``DatabaseFileSurvey``), opened as a Tandem database that declares no tables, and its
    /// `server_` tables are created in one write transaction; processes starting together agree,
    /// since each step is idempotent under the write lock.
    ///
    /// When creating the file fails part-way (a full disk, say), the file and the sidecar files
    /// created with it are removed again.
    /// - Throws: ``TandemError/invalidBackend(_:)`` when the directory is missing, `path` is a
    ///   directory, or the file is a client database or not a Tandem file; open errors naming the path.
    public init(path: String, configuration: Configuration = Configuration()) throws {
        let path = try EmbeddedBackend.resolvedPath(path)
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw TandemError.invalidBackend("the directory '\(directory)' of the backend file '\(path)' does not exist")
        }
        // A file that is some other SQLite database, or a client database, is refused before
        // anything is changed in it.
        let survey = try EmbeddedBackend.survey(path)
        if let survey { try EmbeddedBackend.refuseUnlessServerFile(survey) }
        let created = survey == nil
        // The file and its sidecar files (SharedDatabase's documented set) that are not there yet.
        let files = ([path] + DatabaseFiles(database: path).sidecars).filter { !FileManager.default.fileExists(atPath: $0) }
        // Opened as a database that declares no tables; a schema another process stores at the
        // same moment (a client database made at this path) is refused, never replaced.
        var opening = configuration
        opening.upgradesSchema = false
        let database: SharedDatabase
        do {
            database = try SharedDatabase(path: path, schema: survey?.isTandemDatabase == true ? nil : Schema(tables: []), configuration: opening)
        } catch TandemError.invalidSchema {
            throw TandemError.invalidBackend("'\(path)' is a client database (it declares tables), not a backend")
        }  // any other failure: SharedDatabase removed what it created
        guard database.schema.tables.isEmpty else {
            throw TandemError.invalidBackend("'\(path)' is a client database (it declares tables), not a backend")
        }
        do {
            if try !EmbeddedBackend.hasTables(in: database) { try EmbeddedBackend.createTables(in: database) }
        } catch {
            // The backend's tables could not be made (a full disk, say) in a file this call
            // created: it goes again with its sidecar files, unless another process got further
            // (its tables are there) or holds the lock (it is using the new file).
            let contended = (error as? SQLiteError).map { $0.code == .busy || $0.code == .locked } ?? false
            let tablesThere = (try? database.read { try $0.fetchAll("SELECT 1 FROM sqlite_master WHERE name = 'server_changes'") })?.isEmpty == false
            if created && !contended && !tablesThere {
                for file in files { try? FileManager.default.removeItem(atPath: file) }
            }
            throw error
        }
        self.database = database
        serverID = try database.clientID()
        // The new server's id goes into the file itself, where clients read it without opening
        // the file for writing or touching its -shm (see identifier(ofFileAt:)).
        if created { _ = try? database.checkpoint(.passive) }
        token = try database.addImmediateChangeHandler { [weak self] change in
            if change.isUnknown || change.tables.contains("server_changes") { self?.wake(interrupting: false) }
        }
        // Another process's upload wakes a wait before the observer has read what changed (the
        // wait reads the change log itself); the handler above follows with the tables.
        wakeUpToken = try database.addWakeUpHandler { [weak self] in self?.wake(interrupting: false) }
    }

    deinit {
        token?.cancel()
        wakeUpToken?.cancel()
    }

    /// Whether the file has the backend's tables as this version makes them (a read: most
    /// openings find them, and need no write transaction).
    private static func hasTables(in database: SharedDatabase) throws -> Bool {
        try database.read { tx in
            try tx.scalar(
                """
                SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'table'
                        AND name IN ('server_rows', 'server_changes', 'server_uploads', 'server_clients')) = 4
                    AND EXISTS (SELECT 1 FROM pragma_table_info('server_uploads') WHERE name = 'digest')
                """
            ).int64Value == 1
        }
    }

    /// Creates the backend's tables (each statement idempotent, one write transaction).
    private static func createTables(in database: SharedDatabase) throws {
        try database.write { tx in
            try tx.execute(EmbeddedBackend.ddl)
            // Server files from before upload digests: add the column (unknown digests count as retries).
            let hasDigest = try tx.scalar("SELECT count(*) FROM pragma_table_info('server_uploads') WHERE name = 'digest'").int64Value ?? 0
            if hasDigest == 0 { try tx.execute("ALTER TABLE server_uploads ADD COLUMN digest TEXT NOT NULL DEFAULT ''") }
        }
    }

    /// `path` resolved as Tandem opens it (``SharedDatabase/resolvedPath(_:)``), refused when it
    /// names a directory, a FIFO, a device or a hard-linked file.
    static func resolvedPath(_ path: String) throws -> String {
        do {
            return try SharedDatabase.resolvedPath(path)
        } catch TandemError.cannotOpen(_, let reason) {
            throw TandemError.invalidBackend("cannot use '\(path)' as the backend file: \(reason)")
        }
    }

    /// The read-only survey of the file at `path` (nil when there is none, or it is empty).
    static func survey(_ path: String, onDiskOnly: Bool = false) throws -> DatabaseFileSurvey? {
        do {
            return try DatabaseFileSurvey.of(path: path, onDiskOnly: onDiskOnly)
        } catch TandemError.cannotOpen(_, let reason) {
            throw TandemError.invalidBackend("'\(path)' is not a Tandem backend: \(reason)")
        }
    }

    /// Refuses a client database (it declares tables) and a file another program made (objects
    /// that are neither SQLite's, Tandem's nor the backend's `server_` tables).
    private static func refuseUnlessServerFile(_ survey: DatabaseFileSurvey) throws {
        guard survey.declaredTables.isEmpty else {
            throw TandemError.invalidBackend("'\(survey.path)' is a client database (it declares tables), not a backend")
        }
        if survey.foreignObjects.contains(where: { !$0.name.hasPrefix("server_") && !$0.name.hasPrefix("ps_") }) {
            throw TandemError.invalidBackend("'\(survey.path)' is an SQLite database but not a Tandem backend")
        }
    }

    /// Wakes every wait (a commit to the change log, or ``interruptWaits()``).
    private func wake(interrupting: Bool) {
        changed.lock()
        generation += 1
        if interrupting { interruptions += 1 }
        changed.broadcast()
        changed.unlock()
    }

    /// The server database's own id (its `ps_kv` client id, made when the file was created).
    public var identifier: String { serverID }

    /// Applies each transaction once per (client id, transaction id) in one server transaction.
    /// - Throws: ``TandemError/staleEpoch(held:current:)`` for an older epoch than one seen for the client;
    ///   ``TandemError/transactionConflict(clientID:transactionID:highest:)`` for other entries under an applied pair.
    public func upload(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws {
        var written: ClosedRange<Int64>?
        do {
            try write(transactions, clientID: clientID, epoch: epoch, recording: &written)
        } catch {
            if let written { forgetOwn(written) }  // not committed: another writer may take them
            throw error
        }
    }

    /// ``upload(_:clientID:epoch:)``'s write transaction; the versions it took go into `written`
    /// and are counted as this object's own before its commit wakes anyone.
    private func write(_ transactions: [CrudTransaction], clientID: String, epoch: Int64, recording written: inout ClosedRange<Int64>?) throws {
        try database.write { tx in
            let seen = try tx.scalar("SELECT epoch FROM server_clients WHERE client_id = ?", [clientID]).int64Value ?? 0
            guard epoch >= seen else { throw TandemError.staleEpoch(held: epoch, current: seen) }
            if epoch > seen {
                try tx.execute("INSERT OR REPLACE INTO server_clients(client_id, epoch) VALUES (?, ?)", [clientID, epoch])
            }
            // The log's newest change, on the version key (server_uploads has no index on txn):
            // this write numbers the batch's transactions on from its transaction, and its
            // versions follow it (one writer at a time).
            let newestBefore = try tx.fetchAll("SELECT version, txn FROM server_changes ORDER BY version DESC LIMIT 1").first
            let versionsBefore = newestBefore?[0].int64Value ?? 0
            var txn = newestBefore?[1].int64Value ?? 0
            // The highest transaction id applied before this batch (the whole batch rolls back on a conflict).
            let highest = try tx.scalar("SELECT max(tx_id) FROM server_uploads WHERE client_id = ?", [clientID]).int64Value ?? 0
            // The batch's transactions applied before (retries), with their digests, in one read.
            var applied: [Int64: String] = [:]
            let ids = JSONValue.array(transactions.map { .integer($0.transactionID) }).jsonText
            for row in try tx.fetchAll(
                "SELECT tx_id, digest FROM server_uploads WHERE client_id = ? AND tx_id IN (SELECT value FROM json_each(?))", [clientID, ids])
            {
                if let id = row[0].int64Value { applied[id] = row[1].stringValue ?? "" }
            }
            for transaction in transactions {
                let digest = transaction.digest
                if let done = applied[transaction.transactionID] {
                    if done == digest || done.isEmpty { continue }  // a retry: applied once already
                    throw TandemError.transactionConflict(clientID: clientID, transactionID: transaction.transactionID, highest: highest)
                }
                txn += 1
                for entry in transaction.entries { try apply(entry, txn: txn, in: tx) }
                try tx.execute(
                    "INSERT INTO server_uploads(client_id, tx_id, txn, digest) VALUES (?, ?, ?, ?)",
                    [clientID, transaction.transactionID, txn, digest])
                applied[transaction.transactionID] = digest
            }
            // The versions this write took.
            let newest = try tx.scalar("SELECT coalesce(max(version), 0) FROM server_changes").int64Value ?? 0
            if newest > versionsBefore {
                written = (versionsBefore + 1)...newest
                recordOwn(written!)
            }
        }
    }

    /// Counts `versions` as this object's own upload (see ``waitForChanges(after:timeout:)``).
    /// The newest 64 runs are kept (uploads with no wait to prune them, `sync.once`): an older
    /// one forgotten costs at most a wait woken by its own upload.
    private func recordOwn(_ versions: ClosedRange<Int64>) {
        changed.lock()
        defer { changed.unlock() }
        if let last = ownUploads.last, last.upperBound + 1 == versions.lowerBound {
            ownUploads[ownUploads.count - 1] = last.lowerBound...versions.upperBound
        } else {
            ownUploads.append(versions)
            if ownUploads.count > 64 { ownUploads.removeFirst(ownUploads.count - 64) }
        }
    }

    /// Takes back `versions`, the last ones ``recordOwn(_:)`` counted (uploads come one at a
    /// time), of an upload that did not commit.
    private func forgetOwn(_ versions: ClosedRange<Int64>) {
        changed.lock()
        defer { changed.unlock() }
        guard let last = ownUploads.last, last.upperBound == versions.upperBound else { return }
        if last.lowerBound < versions.lowerBound {
            ownUploads[ownUploads.count - 1] = last.lowerBound...(versions.lowerBound - 1)
        } else {
            ownUploads.removeLast()
        }
    }

    /// Whether this object's own uploads wrote every version in `versions`; forgets those at or
    /// before `versions.lowerBound - 1`, which the waiting caller has.
    private func ownUploadsCover(_ versions: ClosedRange<Int64>) -> Bool {
        changed.lock()
        defer { changed.unlock() }
        ownUploads.removeAll { $0.upperBound < versions.lowerBound }
        var next = versions.lowerBound
        for range in ownUploads where range.lowerBound <= next {
            next = max(next, range.upperBound + 1)
        }
        return next > versions.upperBound
    }

    /// Applies one entry under the conflict rule (DESIGN.md, "Conflict rule"): PUT writes the
    /// whole row; PATCH changes the named columns of an existing row; a PATCH of a row that no
    /// longer exists (another client deleted it) changes nothing, because the delete wins, and
    /// the row's deletion is logged again so the patching client drops its copy too.
    private func apply(_ entry: CrudEntry, txn: Int64, in tx: Transaction) throws {
        let data = JSONValue.object(entry.data ?? [:]).jsonText
        switch entry.op {
        case .put:
            try tx.execute("INSERT OR REPLACE INTO server_rows(type, id, data) VALUES (?, ?, json(?))", [entry.table, entry.rowID, data])
        case .patch:
            try tx.execute("UPDATE server_rows SET data = json_patch(data, json(?)) WHERE type = ? AND id = ?", [data, entry.table, entry.rowID])
        case .delete:
            try tx.execute("DELETE FROM server_rows WHERE type = ? AND id = ?", [entry.table, entry.rowID])
        }
        try tx.execute(
            """
            INSERT INTO server_changes(txn, op, type, id, data)
            SELECT ?, CASE WHEN data IS NULL THEN 'DELETE' ELSE 'PUT' END, ?, ?, data
            FROM (SELECT (SELECT data FROM server_rows WHERE type = ? AND id = ?) AS data)
            """, [txn, entry.table, entry.rowID, entry.table, entry.rowID])
    }

    /// Changes after `cursor` (a version number as text; `""` for all), at most about `limit`, whole server transactions.
    public func fetchChanges(after cursor: String, limit: Int) throws -> ChangeBatch {
        let after = try parse(cursor)
        return try database.read { tx in
            var rows = try tx.fetchAll(
                "SELECT version, txn, op, type, id, data FROM server_changes WHERE version > ? ORDER BY version LIMIT ?",
                [after, max(1, limit)])
            guard let last = rows.last, let lastVersion = last[0].int64Value else {
                return ChangeBatch(changes: [], nextCursor: cursor, hasMore: false)
            }
            // Never split a server transaction across batches: its changes follow each other in
            // version order (the server file has one writer at a time), so read on until another
            // transaction's, on the version key.
            let end = try tx.scalar(
                "SELECT version FROM server_changes WHERE version > ? AND txn <> ? ORDER BY version LIMIT 1", [lastVersion, last[1]]
            ).int64Value
            rows += try tx.fetchAll(
                "SELECT version, txn, op, type, id, data FROM server_changes WHERE version > ? AND version < ? ORDER BY version",
                [lastVersion, end ?? Int64.max])
            let more = end != nil
            let next = rows.last?[0].int64Value ?? lastVersion
            // From the beginning, the log holds every row the server has: a full sync, which
            // drops the client's synced rows that have no pending upload first.
            let reason = after == 0 ? "first sync" : nil
            let changes = rows.map { row in
                ServerChange(
                    op: row[2].stringValue == "DELETE" ? .delete : .put, table: row[3].stringValue ?? "",
                    rowID: row[4].stringValue ?? "", data: row[5].stringValue)
            }
            return ChangeBatch(changes: changes, nextCursor: String(next), hasMore: more, fullSyncReason: reason)
        }
    }

    /// Waits on the server file's `-notify` wake-up (no polling) up to `timeout`, or
    /// until ``interruptWaits()``. Changes this object uploaded wake no wait (the owner downloads
    /// after uploading; see ``SyncBackend/waitForChanges(after:timeout:)``); a client that has
    /// never synced (`cursor` empty) is answered at once, since a first sync is due.
    public func waitForChanges(after cursor: String, timeout: Duration) throws -> String? {
        let after = try parse(cursor)
        var known = after  // changes through here: the caller's, or this object's own uploads
        let deadline = Date(timeIntervalSinceNow: timeout / .seconds(1))
        changed.lock()
        let interruptionsBefore = interruptions
        changed.unlock()
        while true {
            changed.lock()
            let seen = generation
            let interrupted = interruptions != interruptionsBefore
            let unchanged = lastRead.flatMap { $0.generation == seen ? $0.newest : nil }
            changed.unlock()
            if interrupted { return nil }
            let newest: Int64
            if let unchanged {
                newest = unchanged
            } else {
                newest = try database.read { try $0.scalar("SELECT coalesce(max(version), 0) FROM server_changes").int64Value ?? 0 }
                changed.lock()
                lastRead = (seen, newest)
                changed.unlock()
            }
            if cursor.isEmpty { return String(newest) }
            if newest > known {
                guard ownUploadsCover((known + 1)...newest) else { return String(newest) }
                known = newest
            }
            // Waits for a commit after the read above (one between them moved `generation`).
            changed.lock()
            while generation == seen, deadline.timeIntervalSinceNow > 0 { _ = changed.wait(until: deadline) }
            changed.unlock()
            if deadline.timeIntervalSinceNow <= 0 { return nil }
        }
    }

    /// Ends pending ``waitForChanges(after:timeout:)`` calls early (they return nil). Later
    /// calls wait as usual, so a backend can be handed to a new sync session.
    public func interruptWaits() {
        wake(interrupting: true)
    }

    func parse(_ cursor: String) throws -> Int64 {
        if cursor.isEmpty { return 0 }
        guard let value = Int64(cursor), value >= 0 else {
            throw TandemError.invalidBackend("the stored cursor '\(cursor)' is not a cursor of the embedded backend at '\(database.path)'")
        }
        return value
    }

    /// Every row the server holds, as (table, id, data JSON), ordered; for checks and tools.
    public func rows() throws -> [(table: String, id: String, data: String)] {
        try database.read { tx in
            try tx.fetchAll("SELECT type, id, data FROM server_rows ORDER BY type, id").map {
                ($0[0].stringValue ?? "", $0[1].stringValue ?? "", $0[2].stringValue ?? "")
            }
        }
    }
}
