import Foundation
import Synchronization

/// Elects one owner per database file: whoever holds an exclusive `flock` on `<db>-owner.lock`.
///
/// A stand-by waits for the lock in a blocking call on a dedicated thread, so the kernel hands
/// the lock over the instant the owner releases it or dies (kill -9 included). On taking the
/// lock the new owner increments the **epoch** in the database, in one write transaction with
/// its pid; sync writes compare their epoch with the stored one and abort when it moved on.
final class OwnerElection: Sendable {
    private struct State {
        var cancelled = false
        var epoch: Int64?
    }

    private let database: SharedDatabase
    private let lock: FileLock
    private let state = Mutex(State())
    /// Ends a stand-by's wait for the lock when ``release()`` is called.
    private let waiting = LockWatchdog.Cancellation()

    init(database: SharedDatabase) throws {
        self.database = database
        self.lock = try FileLock(path: database.files.ownerLock, mode: database.configuration.fileMode)
    }

    /// Takes ownership if no process holds it. Returns the new epoch, or nil when another process owns sync.
    func tryAcquire() throws -> Int64? {
        guard try lock.tryLock() else { return nil }
        do {
            guard let epoch = try becomeOwner() else { return nil }
            return epoch
        } catch {
            lock.unlock()
            throw error
        }
    }

    /// Waits for ownership on a dedicated thread and calls `onOwner` with the new epoch.
    /// `onError` is called if the lock or the epoch write fails (ownership is not kept then).
    ///
    /// The wait is a blocking `flock`, so the kernel hands the lock over at once; ``release()``
    /// interrupts it (see ``LockWatchdog``), so a cancelled stand-by's thread ends at once, and
    /// with it the thread's hold on the database.
    func start(onOwner: @escaping @Sendable (Int64) -> Void, onError: @escaping @Sendable (Error) -> Void) {
        let thread = Thread { [self] in
            do {
                guard try waitForLock() else { return }  // cancelled
                guard let epoch = try becomeOwner() else { return }
                onOwner(epoch)
            } catch {
                lock.unlock()
                onError(error)
            }
        }
        thread.name = "tandem.owner-election"
        thread.stackSize = 256 << 10
        thread.start()
    }

    /// Blocks until the lock is held (true) or ``release()`` cancels the wait (false).
    private func waitForLock() throws -> Bool {
        guard try lock.lock(until: .max, cancellation: waiting, interruptible: database.configuration.interruptsLockWaits) else { return false }
        // An uninterruptible wait (the program handles SIGURG itself) ends only with the lock.
        guard !state.withLock({ $0.cancelled }) else { lock.unlock(); return false }
        return true
    }

    /// Increments the epoch; returns nil (and lets the lock go) when ``release()`` came first.
    private func becomeOwner() throws -> Int64? {
        let epoch = try database.write { tx -> Int64 in
            let epoch = (try tx.stored(.epoch).int64Value ?? 0) + 1
            try tx.store(.epoch, epoch)
            try tx.store(.ownerPID, Int64(getpid()))
            return epoch
        }
        let kept = state.withLock { s -> Bool in
            if s.cancelled { return false }
            s.epoch = epoch
            return true
        }
        if !kept { giveUp() }
        return kept ? epoch : nil
    }

    var epoch: Int64? { state.withLock { $0.epoch } }

    /// Gives up ownership (or stops waiting for it: a stand-by's waiting thread ends at once).
    func release() {
        let wasOwner = state.withLock { s -> Bool in
            s.cancelled = true
            defer { s.epoch = nil }
            return s.epoch != nil
        }
        waiting.cancel()
        if wasOwner { giveUp() }
    }

    private func giveUp() {
        _ = try? database.write { try $0.removeStored(.ownerPID, ifValue: Int64(getpid())) }
        lock.unlock()
    }
}
