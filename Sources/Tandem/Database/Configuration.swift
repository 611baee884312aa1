import Foundation

/// How a ``SharedDatabase`` opens and writes its file.
public struct Configuration: Sendable {
    /// SQLite's `synchronous` setting for the WAL.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/pragma.html#pragma_synchronous
    public enum Synchronous: String, Sendable { case normal = "NORMAL", full = "FULL" }

    /// Open the file read-only: reads and live queries work, every write throws ``TandemError/readOnly(path:)``.
    public var readOnly = false
    /// How long opening may retry `SQLITE_BUSY` (the WAL switch and WAL recovery skip the busy
    /// handler). Default 5 s; at most a day.
    public var openTimeout: Duration = .seconds(5)
    /// SQLite's busy timeout, the safety net against writers that do not use Tandem, in whole
    /// milliseconds (a fraction rounds up; at most `Int32.max` ms). Default 5 s.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/busy_timeout.html
    public var busyTimeout: Duration = .seconds(5)
    /// Told, once per wait, the pid of a process migrating the file's schema (``Migration``)
    /// when the busy timeout runs out while that process holds the write lock: the wait goes on
    /// until the migration ends (one write transaction, however long), instead of failing with
    /// `SQLITE_BUSY`. Called on the waiting thread; nil says nothing.
    public var onWaitForMigration: (@Sendable (_ pid: Int32) -> Void)?
    /// Default `.normal`: a commit is durable across process crashes, and across power loss once the WAL is checkpointed.
    public var synchronous: Synchronous = .normal
    /// File mode for the database and its sidecar files. Default 0600; use 0660 for a group-shared database.
    public var fileMode: mode_t = 0o600
    /// How many reader connections a process keeps at most. Default 4.
    public var maximumReaders = 4
    /// SQLite's `journal_size_limit` in bytes: the WAL is truncated to this after a checkpoint. Default 64 MiB.
    public var journalSizeLimit: Int64 = 64 << 20
    /// The owner truncates the WAL (`wal_checkpoint(TRUNCATE)`) when it grows past this many bytes. Default 16 MiB.
    public var walCheckpointThreshold: Int64 = 16 << 20
    /// Backstop poll interval for changes made without a wake-up (e.g. by the `sqlite3` shell).
    /// Default 1 s; at most a day.
    public var changePollInterval: Duration = .seconds(1)
    /// The time between ``SyncEvent/progress(_:)`` reports while the owner drains a backlog. Default 1 s.
    public var syncProgressInterval: Duration = .seconds(1)

    /// How many write transactions in a row a process may take the cross-process write lock
    /// before it yields to waiting writers of other processes. Lower is fairer (lower tail
    /// latency), higher gives more throughput under contention. Default 4. Then the writer
    /// queues behind the waiting writers, which are served in arrival order. With no writer
    /// waiting, the streak goes on.
    public var writeLockStreakLimit = 4

    /// Whether opening with a schema may change a schema already stored in the file (default
    /// true: the file is upgraded to the given schema). When false, a file whose stored schema
    /// differs from the given one is refused with ``TandemError/invalidSchema(_:)`` and left as
    /// it is; a new file, or one without a schema, still gets the given one. The check and the
    /// install are one write transaction, so a process that stores another schema at the same
    /// moment is never overwritten.
    public var upgradesSchema = true

    /// Whether Tandem may interrupt its own blocked lock waits with `SIGURG` (default true).
    ///
    /// `flock(2)` has no timeout, so to give the cross-process write lock the busy timeout as a
    /// deadline, and to end a stand-by's wait for ownership when sync stops, a watchdog thread
    /// sends `SIGURG` to the waiting thread (`pthread_kill`), as Go's runtime does. This is
    /// process-wide: the first such wait installs a do-nothing `SIGURG` handler without
    /// `SA_RESTART`, unless the program already handles `SIGURG` (then waits have no deadline).
    /// Set false to leave `SIGURG` alone: a writer then waits for the write lock as long as
    /// another process holds it (and waiters are not served in arrival order, since a queued
    /// waiter could not check whether the one ahead of it has stopped), and a stopped
    /// stand-by's thread ends only when it gets the lock.
    ///
    /// Related documentation: https://man7.org/linux/man-pages/man2/flock.2.html (EINTR)
    public var interruptsLockWaits = true

    /// The defaults: read-write, 5 s open timeout, 5000 ms busy timeout, `synchronous=NORMAL`, mode 0600.
    public init() {}
}

extension Configuration {
    /// ``busyTimeout`` as SQLite takes it.
    var busyTimeoutMilliseconds: Int32 {
        get { busyTimeout.clampedMilliseconds }
        set { busyTimeout = .milliseconds(newValue) }
    }
}
