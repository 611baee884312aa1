import CSQLite
import Foundation

/// The cross-process write lock with bounded barging.
///
/// Writers of all processes queue on an exclusive `flock` of `<db>-write.lock`; the kernel wakes
/// waiters the moment the lock is released. A writer that releases the lock and at once asks for
/// it again usually wins before the woken waiters are scheduled, which is fast (no context switch)
/// but can starve them. So the lock file also holds a small shared record, written only by the
/// holder: who held the lock last and how many times in a row. After `streakLimit` consecutive
/// holds, a writer yields its CPU after releasing, and a waiter takes over.
///
/// The record is advisory: a process killed while holding the lock leaves it consistent enough
/// (the next holder overwrites it), and nothing but scheduling depends on it.
final class WriteLock: @unchecked Sendable {
    // Invariant: `record` is read and written only while the flock is held by this process.
    private let lock: FileLock
    private let record: UnsafeMutablePointer<Int64>
    private let streakLimit: Int64
    private let pid = Int64(getpid())
    private var yieldAfterUnlock = false

    private static let recordSize = 4096

    private let timeoutMilliseconds: Int32
    /// False when ``Configuration/interruptsLockWaits`` is off: waits have no deadline.
    private let interruptible: Bool
    private let databasePath: String

    init(path: String, databasePath: String, mode: mode_t, streakLimit: Int, timeoutMilliseconds: Int32, interruptible: Bool = true) throws {
        self.timeoutMilliseconds = timeoutMilliseconds
        self.interruptible = interruptible
        self.databasePath = databasePath
        let lock = try FileLock(path: path, mode: mode)
        self.lock = lock
        self.streakLimit = Int64(max(1, streakLimit))
        var stats = stat()
        if fstat(lock.fd, &stats) == 0, stats.st_size < WriteLock.recordSize {
            // Allocated, not just sized: a write through the mapping to a hole on a full file
            // system would kill the process with SIGBUS.
            let result = posix_fallocate(lock.fd, 0, off_t(WriteLock.recordSize))
            if result != 0 { throw SystemError(call: "posix_fallocate(3)", path: path, errno: result) }
        }
        let mapped = mmap(nil, WriteLock.recordSize, PROT_READ | PROT_WRITE, MAP_SHARED, lock.fd, 0)
        guard let mapped, mapped != MAP_FAILED else { throw SystemError(call: "mmap(2)", path: path, errno: errno) }
        record = mapped.bindMemory(to: Int64.self, capacity: 2)
    }

    deinit { munmap(record, WriteLock.recordSize) }

    /// Blocks until this process holds the write lock, or the busy timeout passes.
    /// - Throws: ``SQLiteError`` with `SQLITE_BUSY` after `timeoutMilliseconds`, like SQLite's own busy timeout.
    /// - Parameter cancellation: ends the wait early; then this throws `CancellationError`.
    func acquire(cancellation: LockWatchdog.Cancellation? = nil) throws {
        if try !lock.tryLock() {
            let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, timeoutMilliseconds)) * 1_000_000
            if try !lock.lock(until: deadline, cancellation: cancellation, interruptible: interruptible) {
                if cancellation?.isCancelled == true { throw CancellationError() }
                throw SQLiteError(extendedCode: SQLITE_BUSY, message:
                    "another process held Tandem's write lock (\(lock.path)) for longer than the busy timeout of \(timeoutMilliseconds) ms",
                    path: databasePath)
            }
        }
        if record[0] == pid {
            record[1] += 1
        } else {
            record[0] = pid
            record[1] = 1
        }
        yieldAfterUnlock = record[1] >= streakLimit
        if yieldAfterUnlock { record[1] = 0 }
    }

    /// Releases the lock; after a long streak, gives waiters the CPU first.
    func release() {
        let yield = yieldAfterUnlock
        lock.unlock()
        if yield { sched_yield() }
    }

    /// Runs `body` holding the lock.
    func withLock<T>(_ body: () throws -> T) throws -> T {
        try acquire()
        defer { release() }
        return try body()
    }

    /// Runs `body` holding the lock if it is free now, else without it.
    func ifFree<T>(_ body: () throws -> T) throws -> T {
        guard try lock.tryLock() else { return try body() }
        defer { lock.unlock() }
        return try body()
    }
}
