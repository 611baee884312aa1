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
        self.fd = try openSidecar(path: path, flags: O_RDWR, mode: mode)
    }

    deinit { close(fd) }

    /// Blocks until the lock is held.
    func lock() throws {
        try syscall("flock(2)", path: path) { flock(fd, LOCK_EX) }
    }

    /// Blocks until the lock is held (true), or until `deadline` (``DispatchTime`` uptime
    /// nanoseconds) passes or `cancellation` fires (false), the wait interrupted by
    /// ``LockWatchdog``. Where waits may not be interrupted (`interruptible` false, or no
    /// watchdog), blocks until the lock is held.
    func lock(until deadline: UInt64, cancellation: LockWatchdog.Cancellation?, interruptible: Bool) throws -> Bool {
        guard interruptible, LockWatchdog.shared.isAvailable else {
            try lock()
            return true
        }
        return try LockWatchdog.shared.run(until: deadline, cancellation: cancellation) { flock(fd, LOCK_EX) }
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

/// Opens (creating if missing) a sidecar file `O_CLOEXEC`; a file it creates gets exactly `mode`, whatever the umask.
func openSidecar(path: String, flags: Int32, mode: mode_t) throws -> Int32 {
    while true {
        let created = open(path, flags | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        if created >= 0 {
            _ = fchmod(created, mode)
            return created
        }
        if errno == EINTR { continue }
        guard errno == EEXIST else { throw SystemError(call: "open(2)", path: path, errno: errno) }
        let existing = open(path, flags | O_CLOEXEC)
        if existing >= 0 { return existing }
        if errno == ENOENT || errno == EINTR { continue }
        throw SystemError(call: "open(2)", path: path, errno: errno)
    }
}
