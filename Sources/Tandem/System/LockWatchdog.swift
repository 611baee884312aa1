import Foundation
import Synchronization

/// Puts a deadline on blocking `flock(2)` calls, which have no timeout of their own.
///
/// A thread about to block registers its deadline; one watchdog thread per process sleeps until
/// the earliest deadline and then sends that thread `SIGURG` with `pthread_kill`, which makes the
/// blocked call return `EINTR`. `SIGURG` is ignored by default and only used this way (as Go's
/// runtime does); Tandem installs a do-nothing handler for it, without `SA_RESTART`, unless the
/// program already handles it, in which case waits simply have no deadline.
final class LockWatchdog: Sendable {
    static let shared = LockWatchdog()

    private struct Waiter {
        let thread: pthread_t
        var deadline: UInt64
    }

    /// Ends a wait of ``run(until:cancellation:_:)`` early, from any thread.
    final class Cancellation: Sendable {
        fileprivate struct State {
            var cancelled = false
            var waiter: UInt64?
        }
        fileprivate let state = Mutex(State())

        var isCancelled: Bool { state.withLock { $0.cancelled } }

        /// The wait returns false as soon as the blocked call is interrupted (at once, or, if the
        /// thread was not blocked yet, within 10 ms).
        func cancel() {
            guard
                let waiter = state.withLock({ s -> UInt64? in
                    s.cancelled = true; return s.waiter
                })
            else { return }
            LockWatchdog.shared.expire(waiter)
        }
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
        var started = false
        /// When the watchdog thread wakes next by itself (uptime nanoseconds): a wait whose
        /// deadline is later needs no wake-up of it (a context switch per wait saved).
        var sleepingUntil: UInt64 = 0
    }

    private let state = Mutex(State())
    private let wake = WakeFlag()
    /// False when the program handles SIGURG itself; then waits have no deadline.
    let isAvailable: Bool

    private init() {
        var current = sigaction()
        sigaction(SIGURG, nil, &current)
        let disposition = unsafeBitCast(current.__sigaction_handler, to: Int.self)
        if disposition == 0 || disposition == 1 {  // SIG_DFL or SIG_IGN: nobody handles it
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            isAvailable = sigaction(SIGURG, &action, nil) == 0
        } else {
            isAvailable = false
        }
    }

    /// Runs `body` (a blocking call that returns -1 with EINTR when interrupted) until it
    /// succeeds, `deadline` (uptime nanoseconds) passes, or `cancellation` is cancelled.
    /// - Returns: false when the deadline passed or the wait was cancelled first.
    func run(until deadline: UInt64, cancellation: Cancellation? = nil, _ body: () -> Int32) throws -> Bool {
        // Worker threads (Dispatch, the Swift concurrency pool) block most signals: let SIGURG in
        // for the wait, so that it can interrupt the call.
        var urgent = sigset_t()
        sigemptyset(&urgent)
        sigaddset(&urgent, SIGURG)
        var previous = sigset_t()
        pthread_sigmask(SIG_UNBLOCK, &urgent, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let id = register(deadline)
        defer {
            cancellation?.state.withLock { $0.waiter = nil }
            unregister(id)
        }
        if let cancellation {
            let cancelled = cancellation.state.withLock { s -> Bool in
                s.waiter = id; return s.cancelled
            }
            if cancelled { return false }
        }
        while true {
            if body() == 0 { return true }
            let code = errno
            guard code == EINTR else { throw SystemError(call: "flock(2) or fcntl(2)", path: nil, errno: code) }
            // An interrupted wait past its deadline (or cancelled) gives up; an early signal just waits again.
            if cancellation?.isCancelled == true || DispatchTime.now().uptimeNanoseconds >= deadline { return false }
        }
    }

    /// Makes a registered wait overdue now: the watchdog interrupts it until it is unregistered.
    fileprivate func expire(_ id: UInt64) {
        state.withLock { s in s.waiters[id]?.deadline = 0 }
        wake.raise()
    }

    private func register(_ deadline: UInt64) -> UInt64 {
        let (id, start, early) = state.withLock { s -> (UInt64, Bool, Bool) in
            s.nextID += 1
            s.waiters[s.nextID] = Waiter(thread: pthread_self(), deadline: deadline)
            defer { s.started = true }
            return (s.nextID, !s.started, deadline < s.sleepingUntil)
        }
        if start {
            let thread = Thread { [self] in loop() }
            thread.name = "tandem.lock-watchdog"
            thread.stackSize = 128 << 10
            thread.start()
        }
        if start || early { wake.raise() }
        return id
    }

    private func unregister(_ id: UInt64) {
        state.withLock { _ = $0.waiters.removeValue(forKey: id) }
    }

    private func loop() {
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            let next = state.withLock { s -> UInt64? in
                var overdue = false
                for waiter in s.waiters.values where waiter.deadline <= now {
                    pthread_kill(waiter.thread, SIGURG)  // under the lock: the waiter is still registered
                    overdue = true
                }
                // Signal overdue waiters again in 10 ms, in case one was not blocked yet.
                let future = s.waiters.values.map(\.deadline).filter { $0 > now }.min()
                let next = overdue ? min(future ?? .max, now + 10_000_000) : future
                // A registration from now on with an earlier deadline raises the (sticky) flag.
                s.sleepingUntil = min(next ?? .max, now + 3_600_000_000_000)
                return next
            }
            let seconds = next.map { Double($0 - now) / 1e9 } ?? 3600
            wake.wait(timeout: min(max(seconds, 0.001), 3600))
        }
    }
}
