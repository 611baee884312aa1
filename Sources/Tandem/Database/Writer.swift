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
    /// `PRAGMA schema_version` after the last transaction that changed no rows; guarded by `mutex`.
    private var knownSchemaVersion: Int64?
    /// `ps_state` as this process's last commit left it, guarded by `mutex`; nil when unknown.
    private var lastCommit: LastCommit?
    /// WAL frames past the last checkpoint that make a writer checkpoint after its commit:
    /// SQLite's default automatic checkpoint.
    static let checkpointFrames: Int64 = 1000
    /// WAL frames past which the writer holding the lock checkpoints before its transaction,
    /// waiting for a checkpoint running outside the lock to end: when checkpoints outside the
    /// lock (slowed by `fsync` on a busy disk) copy frames more slowly than writers append them,
    /// writers wait for the copying, as they would for SQLite's automatic checkpoint.
    static let walFrameLimit: Int64 = 3 * checkpointFrames
    /// Longest a writer holding the lock waits for a checkpoint outside the lock to end (ns):
    /// past it, the transaction goes on and the next holder tries again.
    static let checkpointWait: UInt64 = 1_000_000_000

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

    init(connection: Connection, writeLock: WriteLock, notifyPath: String, mode: mode_t) throws {
        self.connection = connection
        self.writeLock = writeLock
        self.path = connection.path
        self.notifyFD = try FileWakeup.openForSignalling(path: notifyPath, mode: mode)
        self.commitCounter = WALCommitCounter(databasePath: connection.path)
        connection.trackChanges()
        connection.deferCheckpoints()
    }

    deinit { close(notifyFD) }

    /// Runs `body` with the connection and the cross-process lock held, outside any transaction.
    private func enter() throws {
        let me: UInt = pthread_self()
        if holder.load(ordering: .relaxed) == me {
            throw TandemError.invalidSQL(sql: "write", reason: "a write transaction was started inside another one on the same thread (\(path)); run the statements in the outer transaction")
        }
        mutex.lock()
        holder.store(me, ordering: .relaxed)
    }

    private func leave() {
        holder.store(0, ordering: .relaxed)
        mutex.unlock()
    }

    func withExclusiveAccess<T>(_ body: (Connection) throws -> T) throws -> T {
        try enter()
        defer { leave() }
        return try writeLock.withLock { try body(connection) }
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction and commits, or rolls back if it throws.
    /// Records the changed tables in `ps_state` inside the transaction, then wakes other processes.
    /// - Parameter marked: tables to stamp as changed even though no row change of them was seen
    ///   (raw table names), for writes Tandem cannot see.
    func write<T>(marking marked: Set<String> = [], cancellation: LockWatchdog.Cancellation? = nil,
                  _ body: (Transaction) throws -> T) throws -> (T, Commit?) {
        try enter()
        defer { leave() }
        try writeLock.acquire(cancellation: cancellation)
        var locked = true
        defer { if locked { writeLock.release() } }

        if writeLock.walFramesCommitted >= Writer.walFrameLimit {
            catchUpCheckpoint(waiting: Writer.checkpointWait)
        } else if writeLock.checkpointCatchUpPending {
            catchUpCheckpoint()
        }
        try connection.control(.beginImmediate)
        let known = lastCommit.flatMap { $0.dataVersion == connection.dataVersion ? $0.counters : nil }
        lastCommit = nil
        // Stable: no one else can commit now.
        let commitsAtBegin = known?.commits ?? commitCounter.value
        _ = connection.takeChangedTables()
        let changesBefore = connection.totalChanges
        let value: T
        let commit: Commit?
        do {
            value = try connection.withoutTransactionControl { try body(Transaction(connection: connection, isReadOnly: false)) }
            commit = try recordChanges(rowsChanged: connection.totalChanges != changesBefore, commitsAtBegin: commitsAtBegin,
                                       known: known, marked: marked)
            try connection.control(.commit)
            if let counters = commit?.counters { lastCommit = LastCommit(dataVersion: connection.dataVersion, counters: counters) }
            if commit != nil { writeLock.walFramesCommitted = Int64(connection.walFrames) }
        } catch {
            connection.rollbackIfNeeded()
            _ = connection.takeChangedTables()
            throw error
        }
        writeLock.release()
        locked = false
        if commit != nil {
            FileWakeup.signal(fd: notifyFD)
            checkpointIfDue()  // `walFrames` is this commit's
        }
        return (value, commit)
    }

    /// Checkpoints after the lock is released, so that other writers keep committing meanwhile
    /// (SQLite's automatic checkpoint would run inside `COMMIT`, holding every Tandem writer up),
    /// when the WAL holds ``checkpointFrames`` frames more than the last checkpoint of any Tandem
    /// writer copied.
    ///
    /// Frames appended during the checkpoint keep the WAL from restarting; the next hold of the
    /// lock by any Tandem writer copies them (``catchUpCheckpoint()``), a short checkpoint
    /// because they are few.
    private func checkpointIfDue() {
        let frames = Int64(connection.walFrames)
        var copied = writeLock.checkpointedFrames
        if frames < copied { copied = 0 }  // the WAL restarted since (or is about to: 0)
        // If the catch-up copied everything but a reader of another process still used the WAL
        // when its transaction began, the WAL did not restart: the next checkpoint, 1,000 frames
        // on, tries again (retrying sooner, with a catch-up under the lock each time, measured
        // slower for the sync owner's writes).
        guard frames - copied >= Writer.checkpointFrames else { return }
        writeLock.checkpointedFrames = frames  // claimed: other writers need not try meanwhile
        guard let result = try? connection.checkpoint(), !result.busy else { return }
        writeLock.checkpointedFrames = Int64(result.copied)
        writeLock.checkpointCatchUpPending = true
    }

    /// Holding the lock, before the transaction: copies the frames committed during the last
    /// checkpoint outside the lock, so that the transaction's first write can restart the WAL
    /// (SQLite restarts it only when every frame has been copied).
    /// - Parameter waiting: how long to wait for a checkpoint running outside the lock, which
    ///   keeps this one from running (ns; 0: do not wait, the next hold tries again).
    private func catchUpCheckpoint(waiting: UInt64 = 0) {
        let deadline = DispatchTime.now().uptimeNanoseconds + waiting
        var attempt = try? connection.checkpoint()
        while let result = attempt, result.busy, DispatchTime.now().uptimeNanoseconds < deadline {
            var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)  // a checkpoint takes milliseconds
            nanosleep(&pause, nil)
            attempt = try? connection.checkpoint()
        }
        guard let result = attempt, !result.busy else { return }  // the next hold tries
        writeLock.checkpointCatchUpPending = false
        // Everything copied, and no Tandem writer can append before this transaction's first
        // write restarts the WAL (unless a reader still needs it: then the next checkpoint retries).
        writeLock.checkpointedFrames = result.copied < result.frames ? Int64(result.copied) : 0
    }

    /// Closes the current upload transaction id if this transaction queued CRUD entries, and
    /// stamps every changed table with the next change sequence number (all in `ps_state`).
    ///
    /// When SQLite's commit counter differs from the value the last Tandem commit recorded,
    /// another writer committed since without stamping (the `sqlite3` shell): this commit also
    /// stamps "any table", so observers learn of that commit even though a stamped one followed.
    ///
    /// - Parameter known: `ps_state` as this process's last commit left it, when no other
    ///   connection has committed since: then the counters are known, and one statement sets them.
    private func recordChanges(rowsChanged: Bool, commitsAtBegin: Int64?, known: Commit.Counters?, marked: Set<String>) throws -> Commit? {
        var tables = connection.takeChangedTables().union(marked)
        tables.remove(InternalTables.state)  // Tandem's own counters (sealing writes them)
        if tables.isEmpty {
            // Rows changed that the preupdate hook did not report, or the schema changed (DDL
            // changes no rows): stamp "any table", which observers treat as unknown. A
            // transaction that wrote nothing commits nothing and records nothing.
            if !rowsChanged {
                let schemaVersion = try connection.scalar("PRAGMA schema_version").int64Value
                guard schemaVersion != knownSchemaVersion else { return nil }
                knownSchemaVersion = schemaVersion
            }
            tables = [InternalTables.anyTable]
        }
        if let known, let commits = known.commits {
            let next = (commits + 1) & 0xffff_ffff, sequence = known.sequence + 1
            try connection.advanceCounters(commits: next, transactions: tables.contains(InternalTables.crud) ? 1 : 0, sequence: sequence)
            for table in tables { try connection.stampChanged(table, sequence: sequence) }
            return Commit(tables: tables, sequence: sequence, counters: Commit.Counters(commits: next, sequence: sequence))
        }
        var commits: Int64?
        if let commitsAtBegin {
            let next = (commitsAtBegin + 1) & 0xffff_ffff
            if try !connection.advanceCommits(from: commitsAtBegin, to: next) {
                tables.insert(InternalTables.anyTable)  // a foreign commit since, or no record yet
                try connection.setCounter(.commits, next)
            }
            commits = next
        } else if try connection.counter(.commits) != nil {
            tables.insert(InternalTables.anyTable)
            try connection.setCounter(.commits, nil)
        }
        if tables.contains(InternalTables.crud) {
            try connection.incrementCounter(.nextTransaction)
        }
        try connection.incrementCounter(.sequence)
        let sequence = try known.map { $0.sequence + 1 } ?? connection.counter(.sequence)
        for table in tables { try connection.stampChanged(table, sequence: sequence ?? 0) }
        return Commit(tables: tables, sequence: sequence ?? 0, counters: sequence.map { Commit.Counters(commits: commits, sequence: $0) })
    }
}
