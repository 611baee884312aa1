import Foundation
import Synchronization

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
///
/// Process-wide side effect: to put the busy timeout on waits for the cross-process write lock,
/// Tandem installs a do-nothing `SIGURG` handler unless the program handles `SIGURG` itself;
/// ``Configuration/interruptsLockWaits`` turns this off.
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
    /// The file opened, to tell when ``path`` comes to name another (``fileReplacement``).
    let openedFile: FileIdentity?
    /// Set by the first ``close()``.
    private let closed = Atomic<Bool>(false)
    /// How each live query still running ends when the database closes, by subscription token.
    let liveQueries = Mutex<[UInt64: @Sendable (any Error) -> Void]>([:])

    /// The database file and its sidecars (`-wal`, `-shm`, `-notify`, `-write.lock`, `-owner.lock`).
    public var files: DatabaseFiles { DatabaseFiles(database: path) }

    /// Opens (and creates, if missing) a database.
    ///
    /// An existing file is checked read-only before anything is created or changed: a file
    /// whose names collide with the schema is refused as it was found (same journal mode, no
    /// new sidecar files). When opening fails after this call created the file, the file and
    /// the sidecar files it created are removed again.
    ///
    /// - Parameters:
    ///   - path: the database file. Its directory must exist. Sidecar files `<path>-wal`,
    ///     `-shm`, `-notify`, `-write.lock` and `-owner.lock` live beside it.
    ///   - schema: the tables to install or upgrade to; `nil` uses the schema stored in the file.
    ///   - configuration: timeouts, file mode, read-only.
    /// - Throws: ``TandemError/cannotOpen(path:reason:)`` for a missing or unwritable directory, a
    ///   file that is not a database, corruption, or a lock held past ``Configuration/openTimeout``;
    ///   ``TandemError/notInitialized(path:)`` when no schema is given or stored;
    ///   ``TandemError/invalidSchema(_:)`` for a bad schema or a name collision.
    public convenience init(path: String, schema: Schema? = nil, configuration: Configuration = Configuration()) throws {
        try schema?.validate()
        let probe: (Transaction) throws -> Void = { tx in
            let stored = try SchemaInstaller.storedSchema(tx)
            if let schema {
                // An older program, or a list that lost or reordered a migration: refused before anything
                // changes (an older program that the newer migrations let read opens, and reads).
                guard let pending = try MigrationRunner.pendingUnlessReadable(schema.migrations, in: tx) else { return }
                let differs = schema.tables != stored?.tables || (stored != nil && !pending.isEmpty)
                if stored != nil, differs, !configuration.upgradesSchema { throw SharedDatabase.schemaKept(tx.connection.path) }
                if differs, pending.isEmpty || stored == nil { try SchemaInstaller.checkCollisions(schema, stored: stored, in: tx) }
            } else if stored == nil {
                throw TandemError.notInitialized(path: tx.connection.path)
            }
        }
        try self.init(path: path, configuration: configuration, requireStoredSchema: schema == nil, probe: probe) { writer, readers, path in
            let (stored, current, pending) = try readers.read { connection -> (Schema?, Bool, ArraySlice<Migration>?) in
                let tx = Transaction(connection: connection, isReadOnly: true)
                let stored = try SchemaInstaller.storedSchema(tx)
                let pending = try schema.map { try MigrationRunner.pendingUnlessReadable($0.migrations, in: tx) } ?? []
                return (stored, stored == nil ? true : try SchemaInstaller.layoutIsCurrent(tx), pending)
            }
            if pending == nil {
                // An older program that the newer migrations let read: it reads, its writes are refused.
            } else if let schema, let pending, schema.tables != stored?.tables || !pending.isEmpty {
                guard let writer else {
                    throw TandemError.invalidSchema(SchemaProblem(.storedSchemaDiffers, "'\(path)' was opened read-only and its stored schema differs from the one given"))
                }
                _ = try writer.write(migrating: !pending.isEmpty) { tx in
                    if !configuration.upgradesSchema, let current = try SchemaInstaller.storedSchema(tx) {
                        let applied = try MigrationRunner.appliedIDs(in: tx)
                        if current.tables != schema.tables || applied.count < schema.migrations.count { throw SharedDatabase.schemaKept(path) }
                    }
                    try MigrationRunner.migrate(to: schema, in: tx)
                }
            } else if let stored, !current, let writer {
                _ = try writer.write { try SchemaInstaller.install(stored, in: $0) }  // views and triggers of an older Tandem
            }
            if let writer, try readers.read({ try UploadQueueRows.lastIDIsBehind(on: $0) }) {
                _ = try writer.write { try UploadQueueRows.seedLastID(on: $0.connection) }
            }
            guard let resolved = schema ?? stored else { throw TandemError.notInitialized(path: path) }
            // A program that declares a schema writes its layout: a file migrated past it is refused.
            // One that opened with the stored schema runs SQL through whatever views the file has.
            if let schema { writer?.declareSchemaVersion(schema.migrations.count) }
            return resolved
        }
    }

    /// The refusal of a file whose stored schema differs, opened with ``Configuration/upgradesSchema`` false.
    private static func schemaKept(_ path: String) -> TandemError {
        .invalidSchema(SchemaProblem(.storedSchemaDiffers, "'\(path)' stores another schema, which is kept: it is not upgraded when Configuration.upgradesSchema is false"))
    }

    /// Opens the file and its connections, then resolves the schema with `setUp` (given the
    /// writer, or nil when read-only, the reader pool and the standardized path).
    ///
    /// An existing non-empty file is first read on a read-only connection by `probe`, which
    /// refuses it before anything is created or changed (no WAL switch, no sidecar files).
    /// With `requireStoredSchema`, a missing file is refused the same way. When a later step
    /// fails and this call created the database file, it removes the file and the sidecar files
    /// that did not exist before.
    init(
        path: String, configuration: Configuration, requireStoredSchema: Bool = false,
        probe: ((Transaction) throws -> Void)? = nil,
        setUp: (Writer?, ReaderPool, String) throws -> Schema
    ) throws {
        let path = try SharedDatabase.resolvedPath(path)
        // Released by close(), or below when opening fails: the descriptors Tandem reads the file
        // through stay open while any database of this process uses it (``LockSafeFiles``).
        LockSafeFiles.retain(path)
        var opened = false
        defer { if !opened { LockSafeFiles.release(path) } }
        if requireStoredSchema {
            guard FileManager.default.fileExists(atPath: path) else { throw TandemError.notInitialized(path: path) }
        }
        let sidecarsBefore = DatabaseFiles(database: path).sidecars.filter { FileManager.default.fileExists(atPath: $0) }
        // Checks the directory and the header; creates a missing file (only when a schema is given).
        let created = try Opening.prepareFile(path: path, mode: configuration.fileMode, readOnly: configuration.readOnly)
        do {
            var probed: (connection: Connection, file: FileIdentity?)?
            if !created, let probe, requireStoredSchema || Opening.fileSize(path) > 0 {
                // One snapshot: another process may be installing the schema meanwhile.
                let reader = try Opening.openReader(path: path, configuration: configuration)
                let file = FileIdentity(path: path)
                try reader.readTransaction(probe)
                // Kept as the first reader when the file is in WAL already: each connection
                // parses the whole schema at its first statement, the views' triggers too.
                if try reader.scalar("PRAGMA journal_mode").stringValue?.lowercased() == "wal" { probed = (reader, file) }
            }
            let (writer, readers, schema) = try SharedDatabase.connect(path: path, configuration: configuration, firstReader: probed, setUp: setUp)
            self.writer = writer
            self.readers = readers
            self.schema = schema
        } catch {
            // Lock contention means another process uses the new file: it stays.
            if created && !Opening.isContention(error) { Opening.removeCreatedFiles(path: path, keeping: sidecarsBefore) }
            if let error = error as? SQLiteError, error.code == .notADatabase || error.code == .corrupt {
                throw TandemError.cannotOpen(path: path, reason: error.message)
            }
            let diskError =
                (error as? SQLiteError).map { $0.code == .full || $0.code == .ioError }
                ?? (error as? SystemError).map { $0.errno == ENOSPC || $0.errno == EDQUOT } ?? false
            if diskError, let full = Opening.fullFileSystem(path) { throw TandemError.cannotOpen(path: path, reason: "\(full) (\(error))") }
            throw error
        }
        self.path = path
        self.configuration = configuration
        self.openedFile = FileIdentity(path: path)
        self.observer = ChangeObserver(
            path: path, notifyPath: DatabaseFiles(database: path).notify, busyTimeoutMilliseconds: configuration.busyTimeoutMilliseconds,
            pollInterval: configuration.changePollInterval.seconds)
        opened = true
        registerOpened()
    }

    /// Opens the writer (unless read-only) and the reader pool, which starts with `firstReader`
    /// (opened on `file`) when the path still names that file, and runs `setUp`. Everything it
    /// opened is closed again when it throws.
    private static func connect(
        path: String, configuration: Configuration, firstReader: (connection: Connection, file: FileIdentity?)?,
        setUp: (Writer?, ReaderPool, String) throws -> Schema
    ) throws -> (Writer?, ReaderPool, Schema) {
        var writer: Writer?
        if !configuration.readOnly {
            let writeLock = try WriteLock(
                path: DatabaseFiles(database: path).writeLock, databasePath: path, mode: configuration.fileMode,
                streakLimit: configuration.writeLockStreakLimit,
                timeoutMilliseconds: configuration.busyTimeoutMilliseconds,
                interruptible: configuration.interruptsLockWaits, onWaitForMigration: configuration.onWaitForMigration)
            // Openers that find the write lock free hold it while switching to WAL, so that
            // processes starting together mostly take turns; when a writer holds it, opening
            // goes ahead and the busy-retry loop covers the rest.
            let connection = try writeLock.ifFree {
                try Opening.open(path: path, configuration: configuration) {
                    try Opening.configureWriter($0, configuration: configuration)
                }
            }
            writer = try Writer(
                connection: connection, writeLock: writeLock, notifyPath: DatabaseFiles(database: path).notify, mode: configuration.fileMode,
                synchronous: configuration.synchronous
            ) {
                try Opening.open(path: path, configuration: configuration) { try Opening.configureWriter($0, configuration: configuration) }
            }
        }
        // A file moved over the path while the writer waited to open is not the probed one.
        let first = firstReader.flatMap { $0.file != nil && $0.file == FileIdentity(path: path) ? $0.connection : nil }
        let readers = ReaderPool(path: path, maximum: configuration.maximumReaders, first: first) {
            try Opening.openReader(path: path, configuration: configuration)
        }
        return (writer, readers, try setUp(writer, readers, path))
    }

    deinit {
        close()
    }

    /// Closes the database's connections now; reads and writes afterwards throw
    /// ``TandemError/misuse(_:)``.
    ///
    /// The last process to close a file leaves its data in the main file: its last connection
    /// checkpoints the WAL and removes the `-wal` and `-shm`, as SQLite does, so an idle database
    /// is its main file alone (Tandem's own sidecars, `-notify` and the lock files, hold no data).
    /// Waits for a write in progress and for checkpoints running in the background. Releasing the
    /// last reference closes it too; ``closeAll()`` closes every database of the process. Live
    /// queries still running end with ``TandemError/misuse(_:)`` (a stream finishes with it).
    ///
    /// Related SQLite documentation: https://www.sqlite.org/wal.html#the_wal_file
    public func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        unregisterOpened()
        // Live queries end with an error saying so (a stream finishes) instead of waiting for ever.
        let ending = liveQueries.withLock { queries in
            defer { queries.removeAll() }
            return Array(queries.values)
        }
        for end in ending { end(TandemError.misuse("'\(path)' was closed; its live queries ended")) }
        observer.stopAndWait()
        // A path that names another file now: its -wal and -shm are that file's, left alone.
        let sameFile = fileReplacement == nil
        // Read-only, a connection that may write closes last, so that the WAL goes as it would.
        let closer = writer == nil && sameFile ? Opening.closingConnection(path: path, configuration: configuration) : nil
        if let writer {
            // Last: only a connection that can write checkpoints as it closes.
            writer.close(checkpointing: sameFile) { readers.close(checkpointing: $0) }
        } else {
            readers.close(checkpointing: sameFile)
        }
        closer?.close()
        LockSafeFiles.release(path)
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
        try write(marking: [], cancellation: nil, body)
    }

    /// The one write path: the writer's transaction, then this process's live queries and
    /// change handlers told of the commit (other processes learn of it from its stamps).
    func write<T>(marking marked: Set<String>, cancellation: LockWatchdog.Cancellation?, _ body: (Transaction) throws -> T) throws -> T {
        guard let writer else { throw TandemError.readOnly(path: path) }
        let (value, commit) = try writer.write(
            marking: marked, cancellation: cancellation, stamping: { [observer] in observer.ownCommit(sequence: $0, $1) }, body)
        if let commit { observer.localCommit(tables: commit.tables, tag: CommitTag.current) }
        return value
    }

    /// Runs `body` on a reader connection inside one read transaction (one consistent snapshot).
    /// Writing inside it throws ``TandemError/readOnly(path:)``.
    public func read<T>(_ body: (Transaction) throws -> T) throws -> T {
        try readers.read { try $0.readTransaction(body) }
    }

    /// The client id of this database: a UUID made when the file was created, sent with uploads.
    /// - Throws: ``TandemError/damagedLayout(path:problems:)`` when another program deleted it or
    ///   left it empty (`tandem init DB --schema FILE` makes a new one), so that nothing is ever
    ///   uploaded under an empty id.
    public func clientID() throws -> String {
        guard case .text(let id) = try read({ try $0.stored(.clientID) }), !id.isEmpty else {
            throw TandemError.damagedLayout(path: path, problems: ["Tandem's client id is missing or empty (\(Remedy.storeSchema.apiTerms) makes a new one)"])
        }
        return id
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
