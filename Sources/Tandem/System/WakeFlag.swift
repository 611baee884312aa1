import Foundation

/// A sticky wake-up flag: ``raise()`` from any thread; ``wait(timeout:)`` returns at once if it
/// was raised since the last wait, else blocks until raised or the timeout (seconds) passes.
final class WakeFlag: @unchecked Sendable {
    // Invariant: `raised` is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var raised = false

    func raise() {
        condition.lock()
        raised = true
        condition.signal()
        condition.unlock()
    }

    /// Blocks until raised (returns at once if raised since the last wait).
    func wait() {
        condition.lock()
        defer { condition.unlock() }
        while !raised { condition.wait() }
        raised = false
    }

    /// - Returns: true if raised, false on timeout.
    @discardableResult
    func wait(timeout: Double) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !raised {
            if !condition.wait(until: deadline) { break }
        }
        let wasRaised = raised
        raised = false
        return wasRaised
    }
}
