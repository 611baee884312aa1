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
        try wait(until: deadline, cancellation: cancellation, interruptible: interruptible) { flock(fd, LOCK_EX) }
    }

    /// Runs `body`, a blocking call that returns 0 when done and -1 with `errno` otherwise
    /// (`EINTR` when interrupted, when it is called again), until it is done (true), or until
    /// `deadline` passes or `cancellation` fires (false), as ``lock(until:cancellation:interruptible:)``.
    func wait(
        until deadline: UInt64, cancellation: LockWatchdog.Cancellation?, interruptible: Bool,
        _ body: () -> Int32
    ) throws -> Bool {
        guard interruptible, LockWatchdog.shared.isAvailable else {
            try syscall("flock(2) or fcntl(2)", path: path, body)
            return true
        }
        return try LockWatchdog.shared.run(until: deadline, cancellation: cancellation, body)
    }

    /// Blocks until this open file description holds an exclusive `F_OFD_SETLKW` lock on the
    /// one byte at `offset` (0), or returns -1 with `errno` (`EINTR` when interrupted). These
    /// record locks are independent of the `flock` lock on the same file; they too belong to the
    /// open file description and are released when it closes or its process dies.
    ///
    /// Related documentation: https://man7.org/linux/man-pages/man2/fcntl.2.html (open file description locks)
    func lockByte(at offset: Int64) -> Int32 {
        var range = byteRange(offset, type: F_WRLCK)
        return fcntl(fd, FileLock.setLockWait, &range)
    }

    /// Releases the byte lock at `offset` (nothing happens if it is not held).
    func unlockByte(at offset: Int64) {
        var range = byteRange(offset, type: F_UNLCK)
        _ = fcntl(fd, FileLock.setLock, &range)
    }

    /// True when another open file description holds a lock on the byte at `offset` (`F_OFD_GETLK`).
    func isByteLockedElsewhere(at offset: Int64) -> Bool {
        var range = byteRange(offset, type: F_WRLCK)
        return fcntl(fd, FileLock.getLock, &range) == 0 && range.l_type != Int16(F_UNLCK)
    }

    private func byteRange(_ offset: Int64, type: Int32) -> flock {
        var range = flock()
        range.l_type = Int16(type)
        range.l_whence = Int16(SEEK_SET)
        range.l_start = __off_t(offset)
        range.l_len = 1
        return range
    }

    /// `F_OFD_GETLK`, `F_OFD_SETLK` and `F_OFD_SETLKW` from `<fcntl.h>` (Linux 3.15), which
    /// Glibc's module map hides behind `_GNU_SOURCE`.
    private static let getLock: Int32 = 36
    private static let setLock: Int32 = 37
    private static let setLockWait: Int32 = 38

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
