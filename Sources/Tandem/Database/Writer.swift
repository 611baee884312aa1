import Foundation
import Synchronization

/// The process's one writer connection and the cross-process write lock.
///
/// Writers in this process queue on an in-process lock, then writers of all processes queue on
/// an exclusive `flock` of `<db>-write.lock`, so the kernel wakes the next writer the moment the
/// lock is free instead of SQLite's busy handler sleeping and polling. Inside the lock every
/// transaction is `BEGIN IMMEDIATE`; `busy_timeout` still guards against writers that do not use
/// Tandem (the `sqlite3` shell).
final class Writer: @unchecked Sendable {
    // Invariant: `connection` is used only while `mutex` is held.
    private let mutex = NSLock()
    /// The thread inside `write` (pthread_self as an integer; 0 for none), to refuse nesting,
    /// which would otherwise wait forever on itself while holding the cross-process lock.
    private let holder = Atomic<UInt>(0)
    private let connection: Connection
    private let writeLock: WriteLock
    private let notifyFD: Int32
    /// SQLite's count of all commits, to notice commits of writers that stamp nothing.
    private let commitCounter: WALCommitCounter
    let path: String
    /// `ps_state` as this process's last commit left it, guarded by `mutex`; nil when unknown.
    private var lastCommit: LastCommit?
    /// Set by ``close()``, guarded by `mutex`: later writes throw.
    private var closed = false
    /// True once the file holds the upload queue (a new file's first write creates it), guarded
    /// by `mutex`.
    private var hasUploadQueue = false
    /// The schema version (migrations applied) this process declares, -1 until the open set it
    /// (or when it opened without a schema). A write finds a file migrated past it refused.
    let declaredSchemaVersion = Atomic<Int>(-1)
    /// SQLite's `schema_version` when the file was last found at or below that version, guarded
    /// by `mutex`: a migration changes it, so the file is read again only after a schema change.
    private var schemaVersionChecked: Int64?
    let checkpointing: Checkpointing

    /// What a commit left in `ps_state`, and SQLite's data version right after it. While the data
    /// version is the same at the next `BEGIN IMMEDIATE`, no other connection has committed
    /// since, so the commit counter and the sequence number are known without reading them.
    private struct LastCommit {
        var dataVersion: UInt32
        var counters: Commit.Counters
    }

    /// The result of a committed write: which tables changed and the change sequence number given to them.
    struct Commit {
        var tables: Set<String>
        var sequence: Int64
        /// What this commit left in `ps_state`; nil when it has no sequence row.
        fileprivate var counters: Counters? = nil

        struct Counters {
            /// The `commits` counter recorded (nil: none).
            var commits: Int64?
            var sequence: Int64
        }
    }

    /// - Parameter openCheckpointConnection: opens another connection configured as this one,
    ///   for checkpoint passes outside the lock (see ``Checkpointing``).
    /// - Parameter synchronous: the connection's setting (it decides where a writer alone checkpoints).
    init(
        connection: Connection, writeLock: WriteLock, notifyPath: String, mode: mode_t, synchronous: Configuration.Synchronous,
        openCheckpointConnection: @escaping () throws -> Connection
    ) throws {
        self.connection = connection
        self.writeLock = writeLock
        self.checkpointing = Checkpointing(
            writeLock: writeLock,
            policy: CheckpointPolicy(synchronous: synchronous, busyTimeoutMilliseconds: writeLock.timeoutMilliseconds),
            openConnection: openCheckpointConnection)
        self.path = connection.path
        self.notifyFD = try FileWakeup.openForSignalling(path: notifyPath, mode: mode)
        self.commitCounter = WALCommitCounter(databasePath: connection.path)
        connection.trackChanges()
        connection.deferCheckpoints()
    }

    deinit {
        checkpointing.drain()
        Glibc.close(notifyFD)
    }

    /// Sets the schema version this process declares: later writes refuse a file migrated past it.
    func declareSchemaVersion(_ version: Int) {
        mutex.lock()
        defer { mutex.unlock() }
        declaredSchemaVersion.store(version, ordering: .relaxed)
        schemaVersionChecked = nil
    }

    /// Refuses to write a file another process migrated past this process's declared schema
    /// version: its views may no longer have the shape this process writes.
    private func checkSchemaVersion(_ schemaVersion: Int64?) throws {
        let declared = declaredSchemaVersion.load(ordering: .relaxed)
        guard declared >= 0, schemaVersion == nil || schemaVersion != schemaVersionChecked else { return }
        let (version, last) = try MigrationRunner.version(on: connection)
        if version > declared {
            throw TandemError.schemaMigrated(path: path, fileVersion: version, lastMigration: last, programVersion: declared)
        }
        schemaVersionChecked = schemaVersion
    }

    /// Runs `body` with the connection and the cross-process lock held, outside any transaction.
    private func enter() throws {
        let me: UInt = pthread_self()
        if holder.load(ordering: .relaxed) == me {
            throw TandemError.misuse("a write transaction was started inside another one on the same thread (\(path)); run the statements in the outer transaction")
        }
        mutex.lock()
        if closed {
            mutex.unlock()
            throw TandemError.misuse("'\(path)' was closed; open it again to write it")
        }
        holder.store(me, ordering: .relaxed)
    }

    /// How long a close waits for the write lock before it closes without checkpointing.
    static let closeWait = 50

    /// Waits for a write in progress and for checkpoint passes, then closes the connections,
    /// those of `closingOthers` (given whether they may checkpoint) first; later writes throw.
    ///
    /// The last connection of a file to close checkpoints the WAL and removes it, and any
    /// connection that closes first tries an exclusive lock on the file to learn whether it is
    /// the last, which makes a program that opens the file at that instant without a busy
    /// timeout (the `sqlite3` shell under `tandem run`) fail with "database is locked". So the
    /// connections close holding the write lock, as a writer does, when it is free within
    /// ``closeWait`` ms; otherwise they close without checkpointing (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`:
    /// no lock is tried), and the process holding the lock, which has the file open, closes later.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/c_dbconfig_defensive.html#sqlitedbconfignockptonclose
    func close(checkpointing walOnClose: Bool = true, after closingOthers: (_ checkpointing: Bool) -> Void = { _ in }) {
        mutex.lock()
        defer { mutex.unlock() }
        guard !closed else { return }
        closed = true
        let locked = walOnClose && writeLock.take(within: Self.closeWait)
        defer { if locked { writeLock.releaseTaken() } }
        closingOthers(locked)
        checkpointing.close(checkpointing: locked)
        connection.close(checkpointing: locked)
    }

    private func leave() {
        holder.store(0, ordering: .relaxed)
        mutex.unlock()
    }

    /// See ``WriteLock/inheritableDescriptor()``.
    func inheritableLockDescriptor() throws -> Int32 { try writeLock.inheritableDescriptor() }

    func withExclusiveAccess<T>(_ body: (Connection) throws -> T) throws -> T {
        try enter()
        defer { leave() }
        return try writeLock.withLock { try body(connection) }
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction and commits, or rolls back if it throws.
    /// Records the changed tables in `ps_state` inside the transaction, then wakes other processes.
    /// - Parameter marked: tables to stamp as changed even though no row change of them was seen
    ///   (raw table names), for writes Tandem cannot see.
    /// - Parameter stamping: told the sequence number the transaction stamped just before its
    ///   COMMIT, with where the WAL stood at its `BEGIN` (nil: unreadable), then whether that
    ///   COMMIT succeeded or failed, all while the write lock is held: before any process, this
    ///   one's observer among them, can read the stamps or be woken by them.
    func write<T>(
        marking marked: Set<String> = [], cancellation: LockWatchdog.Cancellation? = nil, migrating: Bool = false,
        stamping: (_ sequence: Int64, _ stamp: OwnStamp) -> Void = { _, _ in },
        _ body: (Transaction) throws -> T
    ) throws -> (T, Commit?) {
        try enter()
        defer { leave() }
        try writeLock.acquire(cancellation: cancellation)
        var locked = true
        // A migration says so in the lock's record while it holds the lock: waiters wait it out.
        if migrating { writeLock.markMigrating(true) }
        defer {
            if locked {
                if migrating { writeLock.markMigrating(false) }
                writeLock.release()
            }
        }

        checkpointing.beforeTransaction(on: connection)
        try connection.control(.beginImmediate)
        // Whether the transaction changes the schema, for one that changes no row: compared
        // with the last such transaction's, a first one (binding a backend that is bound
        // already, at every sync's start) or one after a schema change that wrote rows too
        // stamped "any table" and woke every live query of every process.
        let schemaAtBegin = try connection.scalar("PRAGMA schema_version").int64Value
        let known = lastCommit.flatMap { $0.dataVersion == connection.dataVersion ? $0.counters : nil }
        lastCommit = nil
        // Stable: no one else can commit now. Read even when the counters are known: a restart
        // of the WAL by this process's last commit moved the salt.
        let commitsAtBegin = commitCounter.position(inConnection: connection.handle)
        // Whether a writer that records nothing (the sqlite3 shell) committed since the last
        // Tandem commit: then it may have left the transaction counter at or behind the queue
        // (it writes entries without moving the counter on, or set it back), and the queue is
        // sealed first, so that no entry of this transaction joins a transaction queued before
        // it. Before the changes are counted: the seal is no change of the caller's.
        // (A new file's first write makes the queue and the counters: nothing to seal before.)
        var foreign: ForeignCommit?
        if known == nil {
            let tx = Transaction(connection: connection, isReadOnly: false)
            if !hasUploadQueue { hasUploadQueue = try UploadQueueRows.exists(in: tx) }
            if hasUploadQueue {
                foreign = try foreignCommitSinceRecorded(commitsAtBegin)
                if foreign?.happened == true { try UploadQueueRows.seal(in: tx) }
            }
        }
        _ = connection.takeChangedTables()
        let changesBefore = connection.totalChanges
        let value: T
        let commit: Commit?
        var told: Int64?
        do {
            try checkSchemaVersion(schemaAtBegin)
            value = try connection.withoutTransactionControl { try body(Transaction(connection: connection, isReadOnly: false)) }
            commit = try recordChanges(
                rowsChanged: connection.totalChanges != changesBefore, schemaAtBegin: schemaAtBegin, commitsAtBegin: commitsAtBegin,
                known: known, foreign: foreign, marked: marked)
            if let commit {
                stamping(commit.sequence, .committing(begin: commitsAtBegin))
                told = commit.sequence
            }
            try connection.control(.commit)
            if let told { stamping(told, .committed) }
            if let counters = commit?.counters { lastCommit = LastCommit(dataVersion: connection.dataVersion, counters: counters) }
            if commit != nil { checkpointing.committed(on: connection) }
        } catch {
            connection.rollbackIfNeeded()
            _ = connection.takeChangedTables()
            if let told { stamping(told, .failed) }
            throw error
        }
        if migrating { writeLock.markMigrating(false) }
        writeLock.release()
        locked = false
        if commit != nil {
            FileWakeup.signal(fd: notifyFD)
            checkpointing.afterCommit(on: connection)
        }
        return (value, commit)
    }

    /// Whether a commit that recorded nothing came after the last recorded one.
    struct ForeignCommit {
        /// True also when there is no record yet, or no WAL counter to read.
        var happened: Bool
    }

    /// Compares the WAL's commit counter at the start of this write (`position`) with the last
    /// commit Tandem recorded (`ps_state.commits`); nil position: unknown, taken as a foreign commit.
    private func foreignCommitSinceRecorded(_ position: WALCommitCounter.Position?) throws -> ForeignCommit {
        guard let position else { return ForeignCommit(happened: true) }
        let recorded = try connection.counter(.commits).map(WALCommitCounter.Position.init(recorded:))
        let framesAfter = UInt32(truncatingIfNeeded: writeLock.record.walFramesCommitted)
        return ForeignCommit(happened: recorded.map { position.follows($0, framesAfter: framesAfter) } != true)
    }

    /// Closes the current upload transaction id if this transaction queued CRUD entries, and
    /// stamps every changed table with the next change sequence number (all in `ps_state`).
    ///
    /// When the WAL does not stand where the last Tandem commit recorded (its commit counter moved,
    /// or the WAL was made anew: ``WALCommitCounter/Position``), another writer committed since
    /// without stamping (the `sqlite3` shell): this commit also stamps "any table", so observers
    /// learn of that commit even though a stamped one followed.
    ///
    /// - Parameter known: `ps_state` as this process's last commit left it, when no other
    ///   connection has committed since: then the counters are known, and one statement sets them.
    private func recordChanges(
        rowsChanged: Bool, schemaAtBegin: Int64?, commitsAtBegin: WALCommitCounter.Position?, known: Commit.Counters?,
        foreign: ForeignCommit?, marked: Set<String>
    ) throws -> Commit? {
        let queued = try connection.tablesOfUnexplainedEntries()
        var tables = connection.takeChangedTables().union(marked).union(queued)
        tables.remove(InternalTables.state)  // Tandem's own counters (sealing writes them)
        if tables.isEmpty {
            // Rows changed that the preupdate hook did not report, or the schema changed (DDL
            // changes no rows): stamp "any table", which observers treat as unknown. A
            // transaction that wrote nothing commits nothing and records nothing.
            if !rowsChanged {
                guard try connection.scalar("PRAGMA schema_version").int64Value != schemaAtBegin else { return nil }
            }
            tables = [InternalTables.anyTable]
        }
        if let known, known.commits != nil, let commitsAtBegin {
            let next = commitsAtBegin.next.recorded, sequence = known.sequence + 1
            try connection.advanceCounters(commits: next, transactions: tables.contains(InternalTables.crud) ? 1 : 0, sequence: sequence)
            for table in tables { try connection.stampChanged(table, sequence: sequence) }
            return Commit(tables: tables, sequence: sequence, counters: Commit.Counters(commits: next, sequence: sequence))
        }
        var commits: Int64?
        if let commitsAtBegin {
            let next = commitsAtBegin.next.recorded
            if try (foreign ?? foreignCommitSinceRecorded(commitsAtBegin))?.happened != false {
                tables.insert(InternalTables.anyTable)  // a foreign commit since, or no record yet
            }
            try connection.setCounter(.commits, next)
            commits = next
        } else if try connection.counter(.commits) != nil {
            tables.insert(InternalTables.anyTable)
            try connection.setCounter(.commits, nil)
        }
        try connection.endUploadTransaction(ifQueuedIn: tables)
        try connection.incrementCounter(.sequence)
        let sequence = try known.map { $0.sequence + 1 } ?? connection.counter(.sequence)
        for table in tables { try connection.stampChanged(table, sequence: sequence ?? 0) }
        return Commit(tables: tables, sequence: sequence ?? 0, counters: sequence.map { Commit.Counters(commits: commits, sequence: $0) })
    }
}

extension Connection {
    /// Ends the upload queue's current transaction when a write's changed tables (`changed`)
    /// include the queue: the next write's CRUD entries take the next transaction id.
    func endUploadTransaction(ifQueuedIn changed: Set<String>) throws {
        if changed.contains(InternalTables.crud) { try incrementCounter(.nextTransaction) }
    }
}
