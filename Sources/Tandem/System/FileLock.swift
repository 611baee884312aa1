import Foundation

/// An exclusive `flock(2)` lock on a sidecar file that is opened `O_CLOEXEC`, kept open and never unlinked.
///
/// The kernel wakes a blocked waiter the instant the holder unlocks, closes the file, or dies
/// (kill -9 included). Locks belong to the open file description, so two `FileLock`s on the same
/// path conflict even inside one process.
final class FileLock: @unchecked Sendable {
    // Invariant: `fd` is fixed after init and closed only in deinit; flock calls are thread-safe.
    let path: String
    let fd: Int32

    init(path: String, mode: mode_t) throws {
        self.path = path
        self.fd = try syscall("open(2)", path: path) { open(path, O_RDWR | O_CREAT | O_CLOEXEC, mode) }
    }

    deinit { close(fd) }

    /// Blocks until the lock is held.
    func lock() throws {
        try syscall("flock(2)", path: path) { flock(fd, LOCK_EX) }
    }

    /// Takes the lock if it is free; returns false if another holder has it.
    func tryLock() throws -> Bool {
        while true {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
            switch errno {
            case EINTR: continue
            case EWOULDBLOCK: return false
            case let code: throw SystemError(call: "flock(2)", path: path, errno: code)
            }
        }
    }

    func unlock() {
        _ = flock(fd, LOCK_UN)
    }

    /// True when some open file description holds an exclusive lock on `path` (checked with a
    /// shared non-blocking lock taken and released at once on a fresh descriptor).
    static func isHeld(path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        while true {
            if flock(fd, LOCK_SH | LOCK_NB) == 0 {
                _ = flock(fd, LOCK_UN)
                return false
            }
            if errno != EINTR { return errno == EWOULDBLOCK }
        }
    }
}
