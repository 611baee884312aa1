/// The files of one database: SQLite's file and the sidecars SQLite and Tandem keep beside it,
/// in the same directory. A copy, a move or a removal of a database concerns them all (while no
/// process has it open: ``SharedDatabase/backup(to:progress:)`` and
/// ``SharedDatabase/restore(from:to:)`` do it safely).
///
/// Related SQLite documentation: https://www.sqlite.org/tempfiles.html
public struct DatabaseFiles: Sendable, Hashable {
    /// The database file.
    public let database: String

    /// The files of the database at `database`.
    public init(database: String) { self.database = database }

    /// `<db>-wal`: SQLite's write-ahead log, commits not yet checkpointed into the database.
    public var wal: String { database + "-wal" }
    /// `<db>-shm`: SQLite's WAL index, shared memory of the processes that have the file open.
    public var sharedMemory: String { database + "-shm" }
    /// `<db>-journal`: SQLite's rollback journal (a file opened in WAL mode has none at rest).
    public var journal: String { database + "-journal" }
    /// `<db>-notify`: written after each commit to wake other processes.
    public var notify: String { database + "-notify" }
    /// `<db>-write.lock`: the cross-process write lock.
    public var writeLock: String { database + "-write.lock" }
    /// `<db>-owner.lock`: held by the process that owns sync.
    public var ownerLock: String { database + "-owner.lock" }

    /// Every sidecar, in that order, whether it exists or not.
    public var sidecars: [String] { [wal, sharedMemory, journal, notify, writeLock, ownerLock] }
}
