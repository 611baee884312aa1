import CSQLite
import Foundation

/// Opening a connection: path checks, busy timeout first, WAL with busy-retry until a deadline.
enum Opening {
    /// Checks the directory and, for an existing file, its header, so that nothing that is not
    /// an SQLite database is ever opened for writing. Creates a new file with `mode`.
    /// - Returns: true when this call created the file.
    @discardableResult
    static func prepareFile(path: String, mode: mode_t, readOnly: Bool) throws -> Bool {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw TandemError.cannotOpen(path: path, reason: "the directory '\(directory)' does not exist")
        }
        // No descriptor of the file is opened and closed here (``LockSafeFiles``): the process may
        // have it open already, and closing one would cancel SQLite's locks.
        var info = stat()
        if stat(path, &info) != 0 {
            guard errno == ENOENT else {
                throw TandemError.cannotOpen(path: path, reason: DescriptorLimit.reason(errno: errno))
            }
            if readOnly { throw TandemError.cannotOpen(path: path, reason: "the file does not exist") }
            if let problem = directoryProblem(path) { throw TandemError.cannotOpen(path: path, reason: problem) }
            let created = Glibc.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode)
            if created >= 0 {
                _ = fchmod(created, mode)  // the mode exactly, whatever the umask
                LockSafeFiles.keep(created, as: path, of: path)
                return true
            } else if errno != EEXIST {
                throw TandemError.cannotOpen(path: path, reason: directoryProblem(path) ?? DescriptorLimit.reason(errno: errno))
            }
            return false
        }
        if !readOnly, let problem = directoryProblem(path),
            [DatabaseFiles(database: path).writeLock, DatabaseFiles(database: path).notify].contains(where: { !FileManager.default.fileExists(atPath: $0) })
        {
            throw TandemError.cannotOpen(path: path, reason: problem)
        }
        guard let header = LockSafeFiles.read(path, of: path, count: 16) else {
            throw TandemError.cannotOpen(path: path, reason: DescriptorLimit.reason(errno: errno))
        }
        if header.isEmpty { return false }  // empty file: SQLite makes it a database
        let magic = Array("SQLite format 3".utf8) + [0]
        guard header == magic else {
            throw TandemError.cannotOpen(path: path, reason: "the file is not an SQLite database (bad header); it was left untouched")
        }
        return false
    }

    /// Why the directory of `path` cannot take new files (the database, `-wal`, `-shm`,
    /// `-notify`, `-write.lock`), or nil when this process may create files there.
    static func directoryProblem(_ path: String) -> String? {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard access(directory, W_OK) != 0 else { return nil }
        let reason = errno == EROFS ? "it is on a read-only file system" : "uid \(getuid()) may not create files in it: \(DescriptorLimit.reason(errno: errno))"
        return "the directory '\(directory)' is not writable (\(reason)); the database and its -wal, -shm, -notify and -write.lock files live there"
    }

    /// How ``open(path:configuration:configure:)`` starts the reason of a lock held past the deadline.
    static let lockedPrefix = "the database stayed locked for"

    /// Opens a connection and switches it to WAL, retrying `SQLITE_BUSY` (including
    /// `SQLITE_BUSY_RECOVERY`, which skips the busy handler) with backoff from 10 ms doubling to
    /// 250 ms until `configuration.openTimeout` has passed.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/wal.html#sometimes_queries_return_sqlite_busy_in_wal_mode
    static func open(path: String, configuration: Configuration, configure: (Connection) throws -> Void) throws -> Connection {
        let start = DispatchTime.now().uptimeNanoseconds
        let seconds = min(max(configuration.openTimeout.seconds, 0), 86_400)
        let deadline = start + UInt64(seconds * 1e9)
        var delay: UInt64 = 10_000_000
        var recovered = false
        while true {
            do {
                // The busy handler must not outlast the open deadline.
                let now = DispatchTime.now().uptimeNanoseconds
                let remaining = Int32(clamping: deadline > now ? (deadline - now) / 1_000_000 : 0)
                let connection = try Connection(
                    path: path, readOnly: configuration.readOnly,
                    busyTimeoutMilliseconds: min(configuration.busyTimeoutMilliseconds, remaining), rules: LayoutRules())
                try configure(connection)
                connection.setBusyTimeout(configuration.busyTimeoutMilliseconds)
                return connection
            } catch let error as SQLiteError where error.isLockContention {
                let now = DispatchTime.now().uptimeNanoseconds
                if now >= deadline {
                    let waited = Double(now - start) / 1e9
                    throw TandemError.cannotOpen(
                        path: path,
                        reason: String(
                            format:
                                lockedPrefix + " %.1f s (%@); another connection holds a lock", waited, error.message))
                }
                usleep(useconds_t(min(delay, deadline - now) / 1000))
                delay = min(delay * 2, 250_000_000)
            } catch let error as SQLiteError where configuration.readOnly && needsRecovery(error) && !recovered {
                // A writer died mid-transaction and left a hot journal (or a WAL to recover),
                // which only a read-write connection can roll back: do that once, as any SQLite
                // client opening the file would, then read.
                recovered = true
                if let writer = try? Connection(path: path, readOnly: false, busyTimeoutMilliseconds: configuration.busyTimeoutMilliseconds, rules: LayoutRules()) {
                    _ = try? writer.scalar("SELECT count(*) FROM sqlite_master")
                }
            } catch let error as SQLiteError where error.code == .notADatabase || error.code == .corrupt {
                throw TandemError.cannotOpen(path: path, reason: error.message)
            } catch let error as SQLiteError where error.code == .readOnly || error.code == .cantOpen {
                // SQLite could not create -wal or -shm beside the database.
                guard let problem = directoryProblem(path) else { throw error }
                throw TandemError.cannotOpen(path: path, reason: problem)
            }
        }
    }

    /// SQLITE_READONLY_ROLLBACK and SQLITE_READONLY_RECOVERY: a read-only connection found a hot
    /// journal or a WAL that needs recovery.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/rescode.html#readonly_rollback
    static func needsRecovery(_ error: SQLiteError) -> Bool {
        error.extendedCode == 776 || error.extendedCode == 264
    }

    /// Pragmas for a writer: WAL, synchronous, journal size limit; foreign keys off.
    static func configureWriter(_ connection: Connection, configuration: Configuration) throws {
        let mode = try connection.scalar("PRAGMA journal_mode=WAL").stringValue?.lowercased()
        guard mode == "wal" else {
            throw TandemError.cannotOpen(path: connection.path, reason: "could not switch to WAL (journal_mode is \(mode ?? "unknown"))")
        }
        try connection.execute("PRAGMA synchronous=\(configuration.synchronous.rawValue)")
        try connection.execute("PRAGMA foreign_keys=OFF")
        _ = try connection.scalar("PRAGMA journal_size_limit=\(configuration.journalSizeLimit)")
    }

    /// A connection that may write the file (never creating it), its WAL opened, for a
    /// read-only database to close last so that SQLite checkpoints and removes the WAL when no
    /// other connection has the file open; nil when the file cannot be written.
    static func closingConnection(path: String, configuration: Configuration) -> Connection? {
        guard access(path, W_OK) == 0,
            let connection = try? Connection(
                path: path, readOnly: false, busyTimeoutMilliseconds: configuration.busyTimeoutMilliseconds, create: false, rules: LayoutRules())
        else { return nil }
        guard (try? connection.scalar("PRAGMA journal_mode").stringValue?.lowercased()) == "wal" else {
            connection.close()
            return nil
        }
        return connection
    }

    /// A read-only connection (whatever `configuration.readOnly` says), checked as a reader.
    static func openReader(path: String, configuration: Configuration) throws -> Connection {
        var readOnly = configuration
        readOnly.readOnly = true
        return try open(path: path, configuration: readOnly, configure: configureReader)
    }

    /// Checks a reader can read the file (so corruption and NOTADB surface at open).
    static func configureReader(_ connection: Connection) throws {
        _ = try connection.scalar("SELECT count(*) FROM sqlite_master")
    }
}
