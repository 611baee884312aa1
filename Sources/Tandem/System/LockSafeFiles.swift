import Foundation
import Synchronization

/// Reads of files that SQLite holds POSIX advisory locks on (a database and its `-shm`), through
/// descriptors this process opens once and closes only when no database of the process uses the
/// file any more.
///
/// A POSIX lock belongs to the process, and closing *any* descriptor of a file drops every lock
/// the process holds on it, SQLite's own included: a read of a database's header, or of its
/// WAL index, through a descriptor opened and closed while a connection of the same process has
/// the file open would cancel that connection's locks. Another process could then take the
/// database for the last connection, checkpoint it and remove its WAL and `-shm` under the
/// first (which, reading its mapping of the removed `-shm`, dies of SIGBUS, or writes to a WAL
/// no one reads). SQLite itself keeps one descriptor per file and defers closing it for this
/// reason.
///
/// Related SQLite documentation: https://www.sqlite.org/howtocorrupt.html#_posix_advisory_locks_canceled_by_a_separate_thread_doing_close_
enum LockSafeFiles {
    private struct Open {
        var fd: Int32
        var device: UInt64
        var inode: UInt64
    }

    private struct State {
        /// Databases of this process that use each database path (``retain(_:)``).
        var users: [String: Int] = [:]
        /// The descriptors opened for a database path: the file and its `-shm`, and those of
        /// files the paths named before (a file replaced), all closed together.
        var open: [String: [String: [Open]]] = [:]
    }

    private static let state = Mutex(State())

    /// A database of this process begins using the database at `path` (before it opens a
    /// connection): descriptors opened for it stay open until as many ``release(_:)``.
    static func retain(_ path: String) {
        state.withLock { $0.users[path, default: 0] += 1 }
    }

    /// A database of this process stopped using `path` (after its last connection closed):
    /// when no other one uses it, its descriptors are closed.
    static func release(_ path: String) {
        let closing = state.withLock { s -> [Int32] in
            let users = (s.users[path] ?? 1) - 1
            guard users <= 0 else {
                s.users[path] = users
                return []
            }
            s.users[path] = nil
            return (s.open.removeValue(forKey: path) ?? [:]).values.flatMap { $0.map(\.fd) }
        }
        for fd in closing { close(fd) }
    }

    /// Up to `count` bytes at `offset` of `file` (the database `database` itself, or one of its
    /// sidecars that SQLite locks), read through the process's descriptor of it: opened now if
    /// there is none for the file the path names, and kept while `database` is retained (closed
    /// at once otherwise: nothing of this process can hold a lock on it then). Nil when the file
    /// cannot be opened (`errno` says why).
    static func read(_ file: String, of database: String, count: Int, at offset: Int = 0) -> [UInt8]? {
        var info = stat()
        guard stat(file, &info) == 0 else { return nil }
        let (device, inode) = (UInt64(info.st_dev), UInt64(info.st_ino))
        let held = state.withLock { s in s.open[database]?[file]?.last(where: { $0.device == device && $0.inode == inode })?.fd }
        if let held { return pread(held, count: count, offset: offset) }
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        let bytes = pread(fd, count: count, offset: offset)
        keep(fd, as: file, of: database)
        return bytes
    }

    /// Keeps `fd`, a descriptor of `file` this process opened, as the process's descriptor of it
    /// while `database` is retained; closes it otherwise.
    static func keep(_ fd: Int32, as file: String, of database: String) {
        var info = stat()
        _ = fstat(fd, &info)
        let kept = state.withLock { s -> Bool in
            guard (s.users[database] ?? 0) > 0 else { return false }
            s.open[database, default: [:]][file, default: []].append(Open(fd: fd, device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
            return true
        }
        if !kept { close(fd) }
    }

    /// A process holding a POSIX lock anywhere in `file` (SQLite locks its lock bytes and the
    /// `-shm`'s while a connection has the database `database` open): its pid (`F_GETLK`; this
    /// process's own locks never conflict with it), or nil.
    static func lockHolder(_ file: String, of database: String) -> Int32? {
        // A descriptor of the file is needed to ask; the read opens and keeps it as `read` does.
        guard read(file, of: database, count: 0) != nil else { return nil }
        let fd = state.withLock { s in s.open[database]?[file]?.last?.fd }
        let temporary = fd == nil ? open(file, O_RDONLY | O_CLOEXEC) : -1
        defer { if temporary >= 0 { close(temporary) } }
        guard let descriptor = fd ?? (temporary >= 0 ? temporary : nil) else { return nil }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 0
        guard fcntl(descriptor, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK), lock.l_pid > 0 else { return nil }
        return lock.l_pid
    }

    private static func pread(_ fd: Int32, count: Int, offset: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        let n = count == 0 ? 0 : bytes.withUnsafeMutableBytes { Glibc.pread(fd, $0.baseAddress, count, off_t(offset)) }
        guard n >= 0 else { return nil }
        return Array(bytes.prefix(n))
    }
}
