import Dispatch
import Synchronization

/// A sticky wake-up flag: ``raise()`` from any thread; ``wait(timeout:)`` returns at once if it
/// was raised since the last wait, else blocks until raised or the timeout (seconds) passes.
///
/// Timeouts run on the monotonic clock (a `DispatchSemaphore` wait), so setting the wall clock
/// back does not lengthen them.
final class WakeFlag: Sendable {
    // Invariant: the semaphore is signalled only by the raise that set `raised`, so its count
    // stays at most 1; a waiter that takes the signal clears `raised` with an exchange, which
    // also makes every write made before a raise it absorbed visible to it.
    private let semaphore = DispatchSemaphore(value: 0)
    private let raised = Atomic<Bool>(false)

    func raise() {
        if !raised.exchange(true, ordering: .acquiringAndReleasing) { semaphore.signal() }
    }

    /// Blocks until raised (returns at once if raised since the last wait).
    func wait() {
        semaphore.wait()
        _ = raised.exchange(false, ordering: .acquiringAndReleasing)
    }

    /// - Returns: true if raised, false on timeout.
    @discardableResult
    func wait(timeout: Duration) -> Bool {
        wait(timeout: Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
    }

    /// - Returns: true if raised, false on timeout (seconds).
    @discardableResult
    func wait(timeout: Double) -> Bool {
        guard semaphore.wait(timeout: .now() + max(0, timeout)) == .success else { return false }
        _ = raised.exchange(false, ordering: .acquiringAndReleasing)
        return true
    }
}
