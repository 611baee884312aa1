import Foundation

/// One SQLite database in WAL mode shared by many processes on one host.
///
/// Each process opens one writer connection and a small pool of readers. Every write
/// transaction is `BEGIN IMMEDIATE` behind a cross-process `flock` queue, captures its changes
/// to synced tables in the upload queue (`ps_crud`), and wakes the live queries of every process.
///
/// ```swift
/// let db = try SharedDatabase(path: "/var/lib/app/app.db", schema: schema)
/// try db.write { tx in
///     try tx.execute("INSERT INTO notes(title, done) VALUES (?, ?)", ["Buy milk", 0])
/// }
/// for try await rows in db.watch("SELECT count(*) FROM notes") { print(rows) }
/// ```
///
/// All methods are thread-safe. `write` and `read` block the calling thread (writers of all
/// processes queue on the write lock).
public final class SharedDatabase: Sendable {
    /// The database file path.
    public let path: String
    /// How the database was opened (timeouts, file mode, read-only).
    public let configuration: Configuration
    /// The declared schema: the one given at open, or the one stored in the file.
    public let schema: Schema
    let writer: Writer?
    let readers: ReaderPool
    let observer: ChangeObserver

    /// `<db>-notify`: written after each commit to wake other processes.
    public var notifyPath: String { path + "-notify" }
    /// `<db>-write.lock`: the cross-process write lock.
    public var writeLockPath: String { path + "-write.lock" }
    /// `<db>-owner.lock`: held by the process that owns sync.
    public var ownerLockPath: String { path + "-owner.lock" }

    /// Opens (and creates, if missing) a database.
    ///
    /// - Parameters:
    ///   - path: the database file. Its directory must exist. Sidecar files `<path>-wal`,
    ///     `-shm`, `-notify`, `-write.lock` and `-owner.lock` live beside it.
    ///   - schema: the tables to install or upgrade to; `nil` uses the schema stored in the file.
    ///   - configuration: timeouts, file mode, read-only.
    /// - Throws: ``TandemError/cannotOpen(path:reason:)`` for a missing directory, a file that is
    ///   not a database, corruption, or a lock held past ``Configuration/openTimeout``;
    ///   ``TandemError/notInitialized(path:)`` when no schema is given or stored;
    ///   ``TandemError/invalidSchema(_:)`` for a bad schema or a name collision.
    public convenience init(path: String, schema: Schema? = nil, configuration: Configuration = Configuration()) throws {
        try self.init(path: path, configuration: configuration, requireStoredSchema: schema == nil) { writer, readers, path in
            let (stored, current) = try readers.read { connection -> (Schema?, Bool) in
                let tx = Transaction(connection: connection, isReadOnly: true)
                let stored = try SchemaInstaller.storedSchema(tx)
                return (stored, stored == nil ? true : try SchemaInstaller.layoutIsCurrent(tx))
            }
            if let schema, schema != stored {
                guard let writer else {
                    throw TandemError.invalidSchema("'\(path)' was opened read-only and its stored schema differs from the one given")
                }
                _ = try writer.write { try SchemaInstaller.install(schema, in: $0) }
            } else if let stored, !current, let writer {
                _ = try writer.write { try SchemaInstaller.install(stored, in: $0) }  // views and triggers of an older Tandem
            }
            guard let resolved = schema ?? stored else { throw TandemError.notInitialized(path: path) }
            return resolved
        }
    }

    /// Opens the file and its connections, then resolves the schema with `setUp` (given the
    /// writer, or nil when read-only, the reader pool and the standardized path).
    /// With `requireStoredSchema`, a file that is missing or holds no Tandem schema is refused
    /// before anything is created or changed (no WAL switch, no sidecar files).
    init(path: String, configuration: Configuration, requireStoredSchema: Bool = false,
         setUp: (Writer?, ReaderPool, String) throws -> Schema) throws {
        let path = try Opening.resolve(path)
        self.path = path
        self.configuration = configuration
        if requireStoredSchema {
            guard FileManager.default.fileExists(atPath: path) else { throw TandemError.notInitialized(path: path) }
        }
        // Checks the directory and the header; creates a missing file (only when a schema is given).
        try Opening.prepareFile(path: path, mode: configuration.fileMode, readOnly: configuration.readOnly)
        if requireStoredSchema {
            var probe = configuration
            probe.readOnly = true
            let connection = try Opening.open(path: path, configuration: probe, configure: Opening.configureReader)
            guard try SchemaInstaller.storedSchema(Transaction(connection: connection, isReadOnly: true)) != nil else {
                throw TandemError.notInitialized(path: path)
            }
        }

        let openReader = { () throws -> Connection in
            var readerConfiguration = configuration
            readerConfiguration.readOnly = true
            return try Opening.open(path: path, configuration: readerConfiguration, configure: Opening.configureReader)
        }
        self.readers = ReaderPool(maximum: configuration.maximumReaders, open: openReader)
        self.observer = ChangeObserver(path: path, notifyPath: path + "-notify", configuration: configuration)

        if configuration.readOnly {
            self.writer = nil
        } else {
            let writeLock = try WriteQueue(path: path + "-write.lock", databasePath: path, mode: configuration.fileMode,
                                           streakLimit: configuration.writeLockStreakLimit,
                                           timeoutMilliseconds: configuration.busyTimeoutMilliseconds)
            // Openers that find the write lock free hold it while switching to WAL, so that
            // processes starting together mostly take turns; when a writer holds it, opening
            // goes ahead and the busy-retry loop covers the rest.
            let connection = try writeLock.ifFree {
                try Opening.open(path: path, configuration: configuration) {
                    try Opening.configureWriter($0, configuration: configuration)
                }
            }
            self.writer = try Writer(connection: connection, writeLock: writeLock, notifyPath: path + "-notify", mode: configuration.fileMode)
        }
        do {
            self.schema = try setUp(writer, readers, path)
        } catch let error as SQLiteError where error.code == .notADatabase || error.code == .corrupt {
            throw TandemError.cannotOpen(path: path, reason: error.message)
        }
    }

    deinit {
        observer.stop()
    }

    // MARK: Transactions

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`) and commits, or rolls back if it
    /// throws. Blocks while other writers (of any process) hold the write lock.
    ///
    /// Changes through table views queue CRUD entries sharing one transaction id. After the
    /// commit, live queries of every process that read a changed table refresh.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws (after rolling back); ``TandemError/readOnly(path:)``;
    ///   ``SQLiteError`` (e.g. `SQLITE_BUSY` after the busy timeout when a non-Tandem writer holds the lock).
    ///
    /// Related SQLite documentation: https://www.sqlite.org/lang_transaction.html
    @discardableResult
    public func write<T>(_ body: (Transaction) throws -> T) throws -> T {
        guard let writer else { throw TandemError.readOnly(path: path) }
        let (value, commit) = try writer.write(body)
        if let commit { observer.localCommit(commit) }
        return value
    }

    /// Runs `body` on a reader connection inside one read transaction (one consistent snapshot).
    /// Writing inside it throws ``TandemError/readOnly(path:)``.
    public func read<T>(_ body: (Transaction) throws -> T) throws -> T {
        try readers.read { connection in
            try connection.control(.begin)
            defer { connection.rollbackIfNeeded() }
            let value = try connection.withoutTransactionControl { try body(Transaction(connection: connection, isReadOnly: true)) }
            try connection.control(.commit)
            return value
        }
    }

    /// Runs SQL (one or several `;`-separated statements) in one write transaction.
    public func execute(_ sql: String, _ arguments: [any DatabaseValueConvertible] = []) throws {
        try write { try $0.execute(sql, arguments) }
    }

    /// Fetches all rows of one statement from a reader.
    public func fetchAll(_ sql: String, _ arguments: [any DatabaseValueConvertible] = []) throws -> [Row] {
        try read { try $0.fetchAll(sql, arguments) }
    }

    /// The client id of this database: a UUID made when the file was created, sent with uploads.
    public func clientID() throws -> String {
        try read { try $0.scalar("SELECT value FROM ps_kv WHERE key = 'client_id'").stringValue ?? "" }
    }

    /// The journal mode SQLite reports (`wal` for a Tandem database).
    public func journalMode() throws -> String {
        try readers.read { try $0.scalar("PRAGMA journal_mode").stringValue ?? "" }
    }

    /// Runs `PRAGMA integrity_check`; returns its rows joined (`ok` when the file is sound).
    ///
    /// Related SQLite documentation: https://www.sqlite.org/pragma.html#pragma_integrity_check
    public func integrityCheck() throws -> String {
        try readers.read { try $0.fetchAll("PRAGMA integrity_check").compactMap { $0[0].stringValue }.joined(separator: "\n") }
    }
}
