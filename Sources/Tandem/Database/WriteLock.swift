import CSQLite
import Foundation
import Synchronization

/// The cross-process write lock: bounded barging, then first come, first served.
///
/// Writers of all processes hold an exclusive `flock` of `<db>-write.lock` to write; the kernel
/// releases it the moment the holder unlocks, closes the file, or dies (kill -9 included). A
/// writer that releases the lock and at once asks for it again takes it back before anyone else
/// is scheduled, which is fast (no context switch, a warm page cache). After `streakLimit`
/// consecutive holds it must queue like everyone else.
///
/// Waiters queue in arrival order, as in a ticket lock: a waiter draws the next ticket from a
/// counter in the lock file's shared record, takes an `F_OFD_SETLKW` lock on its ticket's byte
/// of the file, waits for the byte of the ticket before it to be free, and only then waits for
/// the `flock`. So each release wakes at most the one waiter at the head of the queue, and
/// waiters are served in order. The kernel frees a dead process's byte lock as it frees its
/// `flock`, so a waiter killed anywhere in the queue lets the one behind it through. The queue
/// only orders waiters; the `flock` alone excludes writers, so a ticket drawn by a process that
/// died before taking its byte costs fairness for one turn, never exclusion.
///
/// The record (``WriteLockRecord``) is advisory (a process killed while holding the lock leaves
/// it consistent enough; the next holder overwrites the streak), and nothing but scheduling
/// depends on it.
final class WriteLock: @unchecked Sendable {
    // Invariant: the record's holder and streak fields, and the tickets served, are written only
    // while the flock is held by this process; the ticket counter only atomically (see
    // ``WriteLockRecord`` for the checkpoint fields).
    private let lock: FileLock
    /// The lock file's shared record, mapped by every process that uses the lock.
    let record: WriteLockRecord.Shared
    private let streakLimit: Int64
    private let pid = Int64(getpid())
    /// True when the last hold ended a streak: the next acquire queues instead of barging.
    private var mustQueue = false
    /// The queue byte this process holds while it holds the lock, if it came through the queue.
    private var heldSlot: Int64?
    /// This process's holds of the lock in a row, the current one included, with no other
    /// Tandem process holding it in between (as far as the advisory holder field tells).
    private var holdsInARow = 0

    /// Queue bytes are `slotBase + ticket mod slotCount`, past the record.
    private static let slotBase: Int64 = 1 << 16
    private static let slotCount: Int64 = 1 << 12

    /// The busy timeout: how long ``acquire(cancellation:)`` waits (ms).
    let timeoutMilliseconds: Int32
    /// False when ``Configuration/interruptsLockWaits`` is off: waits have no deadline.
    private let interruptible: Bool
    private let databasePath: String

    init(
        path: String, databasePath: String, mode: mode_t, streakLimit: Int, timeoutMilliseconds: Int32, interruptible: Bool = true,
        onWaitForMigration: (@Sendable (Int32) -> Void)? = nil
    ) throws {
        self.onWaitForMigration = onWaitForMigration
        self.timeoutMilliseconds = timeoutMilliseconds
        self.interruptible = interruptible
        self.databasePath = databasePath
        let lock = try FileLock(path: path, mode: mode)
        self.lock = lock
        self.streakLimit = Int64(max(1, streakLimit))
        record = try WriteLockRecord.Shared.map(fd: lock.fd, path: path)
    }

    deinit { record.unmap() }

    /// A new descriptor of the lock file's open file description, without `FD_CLOEXEC`: a child
    /// process that inherits it holds the lock (and the queue byte) as long as it keeps it open,
    /// since the kernel releases a `flock` only when the last descriptor of its open file
    /// description closes. The caller closes it.
    /// - Throws: ``SystemError`` naming `dup(2)`.
    func inheritableDescriptor() throws -> Int32 {
        let copy = dup(lock.fd)
        guard copy >= 0 else { throw SystemError(call: "dup(2)", path: lock.path, errno: errno) }
        return copy
    }

    /// Blocks until this process holds the write lock, or the busy timeout passes.
    /// - Throws: ``SQLiteError`` with `SQLITE_BUSY` after `timeoutMilliseconds`, like SQLite's own busy timeout.
    /// - Parameter cancellation: ends the wait early; then this throws `CancellationError`.
    func acquire(cancellation: LockWatchdog.Cancellation? = nil) throws {
        // A writer whose streak ended still takes the lock at once when no one waits for it, so
        // that a writer alone never pays for the queue (a byte lock test every `streakLimit` holds).
        let barged = try (!mustQueue || !isAnyoneQueued) && lock.tryLock()
        if !barged { try queue(cancellation: cancellation) }
        var streak: Int64 = 1
        if record[\.holder] == pid {
            streak = max(0, record[\.streak]) &+ 1
            holdsInARow &+= 1
        } else {
            record[\.holder] = pid
            holdsInARow = 1
        }
        mustQueue = streak >= streakLimit
        record[\.streak] = mustQueue ? 0 : streak
    }

    /// Waits in the queue, then for the `flock`; on return the lock (and the ticket's byte, if
    /// it went through the queue) is held.
    ///
    /// A waiter that stops moving while it holds its place (stopped with SIGSTOP or by a
    /// debugger, or about to time out) must not hold up those behind it while the lock is free:
    /// every ``stallCheck`` of waiting for the previous place, a waiter looks whether the lock is
    /// free, and takes it when it was free at two checks in a row, so that a waiter ahead that
    /// was only slow to be scheduled (a loaded machine) keeps its turn. Without the watchdog (waits that cannot be interrupted) there is no such check, so
    /// waiters wait for the `flock` alone, in no particular order.
    private func queue(cancellation: LockWatchdog.Cancellation?) throws {
        guard interruptible, LockWatchdog.shared.isAvailable else {
            try lock.lock()
            return
        }
        let timeout = UInt64(max(0, timeoutMilliseconds)) * 1_000_000
        var deadline = DispatchTime.now().uptimeNanoseconds + timeout
        var toldOfMigration = false
        let ticket = record.drawTicket()
        let own = WriteLock.slot(ticket), previous = WriteLock.slot(ticket &- 1)
        var step = 0  // 0: taking its own place, 1: waiting for the previous one, 2: for the flock
        var done = false
        var freeAtLastCheck = false
        do {
            while !done {
                let now = DispatchTime.now().uptimeNanoseconds
                if cancellation?.isCancelled == true { break }
                if now >= deadline {
                    // A migration holds the lock for as long as it takes: wait for it to end.
                    guard let migrating = migrationInProgress() else { break }
                    if !toldOfMigration { onWaitForMigration?(migrating) }
                    toldOfMigration = true
                    deadline = now + timeout
                }
                done = try lock.wait(until: min(deadline, now + WriteLock.stallCheck), cancellation: cancellation, interruptible: true) {
                    if step == 0 {
                        // Free unless a waiter a whole queue length ahead still holds it.
                        guard lock.lockByte(at: own) == 0 else { return -1 }
                        step = 1
                    }
                    if step == 1 {
                        guard lock.lockByte(at: previous) == 0 else { return -1 }
                        lock.unlockByte(at: previous)
                        step = 2
                    }
                    return flock(lock.fd, LOCK_EX)
                }
                // The previous waiter has held its place for two checks while the lock stayed
                // free: it is not moving.
                if !done, step == 1 {
                    let free = try lock.tryLock()
                    if free && freeAtLastCheck {
                        done = true
                    } else if free {
                        lock.unlock()
                    }
                    freeAtLastCheck = free
                }
            }
        } catch {
            if step > 0 { lock.unlockByte(at: own) }
            throw error
        }
        guard done else {
            if step > 0 { lock.unlockByte(at: own) }
            if cancellation?.isCancelled == true { throw CancellationError() }
            throw SQLiteError(
                extendedCode: SQLITE_BUSY,
                message:
                    "another process held Tandem's write lock (\(lock.path)) for longer than the busy timeout of \(timeoutMilliseconds) ms (wait longer with \(Remedy.longerBusyTimeout.apiTerms))",
                path: databasePath)
        }
        heldSlot = own
        ticketsServed = ticket &+ 1
    }

    /// Takes the lock outside the queue if it is free or comes free within `milliseconds` (no
    /// wait at all where waits cannot be interrupted): for a close, which must not wait behind a
    /// long hold (a migration, `tandem run`). True when taken; ``releaseTaken()`` releases it.
    func take(within milliseconds: Int) -> Bool {
        guard interruptible, LockWatchdog.shared.isAvailable else { return (try? lock.tryLock()) ?? false }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, milliseconds)) * 1_000_000
        return (try? lock.lock(until: deadline, cancellation: nil, interruptible: true)) ?? false
    }

    /// Releases the lock ``take(within:)`` took.
    func releaseTaken() { lock.unlock() }

    /// Told of a migration that a wait goes on for (see ``Configuration/onWaitForMigration``).
    private let onWaitForMigration: (@Sendable (Int32) -> Void)?

    /// Marks (or clears) this process, which holds the lock, as running a schema migration.
    func markMigrating(_ running: Bool) { record[\.migrating] = running ? pid : 0 }

    /// The pid of another live process marked as migrating, or nil.
    private func migrationInProgress() -> Int32? {
        let marked = record[\.migrating]
        guard marked > 0, marked <= Int64(Int32.max), marked != pid else { return nil }
        return kill(Int32(marked), 0) == 0 || errno == EPERM ? Int32(marked) : nil
    }

    /// How many tickets waiters have drawn from the queue so far (wrapping).
    var ticketsDrawn: Int64 { record[\.tickets] }

    /// True while the waiter holding `ticket` is in the queue or holds the lock through it.
    func isQueued(ticket: Int64) -> Bool { lock.isByteLockedElsewhere(at: WriteLock.slot(ticket)) }

    /// One past the ticket of the last waiter that took the lock through the queue (0 before
    /// any). Advisory, like the streak.
    private var ticketsServed: Int64 {
        get { record[\.ticketsServed] }
        set { record[\.ticketsServed] = newValue }
    }

    /// True when this process writes alone: it has held the lock more times in a row than a
    /// streak allows while others wait, and no one is queued now. Advisory, like the streak.
    var isWritingAlone: Bool { Int64(holdsInARow) > streakLimit && !isAnyoneQueued }

    /// True when a ticket drawn after the last one served belongs to a waiter still in the queue
    /// (its byte is locked), tested oldest first. A waiter that has drawn its ticket but not yet
    /// locked its byte is missed and loses one turn, never exclusion. Past ``scanLimit`` tickets
    /// outstanding (waiters that gave up or died, or a lock file without the served ticket),
    /// someone is assumed to wait.
    private var isAnyoneQueued: Bool {
        let drawn = ticketsDrawn
        var ticket = ticketsServed
        let outstanding = drawn &- ticket
        if outstanding == 0 { return false }
        if outstanding < 0 || outstanding > WriteLock.scanLimit { return true }
        while ticket != drawn {
            if isQueued(ticket: ticket) { return true }
            ticket &+= 1
        }
        return false
    }

    /// Most outstanding tickets ``isAnyoneQueued`` tests one by one.
    private static let scanLimit: Int64 = 64

    /// How long a waiter waits for the previous place in the queue before it checks whether the
    /// lock is free (nanoseconds).
    private static let stallCheck: UInt64 = 50_000_000

    private static func slot(_ ticket: Int64) -> Int64 {
        slotBase + Int64(UInt64(bitPattern: ticket) % UInt64(slotCount))
    }

    /// Releases the lock, then lets the next waiter in the queue go for it.
    func release() {
        lock.unlock()
        if let slot = heldSlot {
            heldSlot = nil
            lock.unlockByte(at: slot)
        }
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
