import Foundation

/// Work started on another thread while the caller goes on with its own; ``value()`` waits for
/// it and gives its result or rethrows its error. The sync owner reads the next upload batch and
/// completes the previous one this way while the backend takes the current one.
final class WorkAhead<T: Sendable>: @unchecked Sendable {
    // Invariant: `result` is written once, by the work, before `done` is signalled; it is read
    // only after a wait on `done`, which is signalled again so that every later wait returns.
    private var result: Result<T, any Error>?
    private let done = DispatchSemaphore(value: 0)

    /// Starts `work` on `queue`, with the caller's ``CommitTag`` bound.
    init(on queue: DispatchQueue, _ work: @escaping @Sendable () throws -> T) {
        let tag = CommitTag.current
        queue.async {
            self.result = CommitTag.$current.withValue(tag) { Result(catching: work) }
            self.done.signal()
        }
    }

    /// Starts `work` on a thread of its own named `name` (independent of Dispatch's pool, which
    /// blocking work elsewhere in the process may hold).
    init(thread name: String, _ work: @escaping @Sendable () throws -> T) {
        let thread = Thread {
            self.result = Result(catching: work)
            self.done.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Waits for the work to end; returns its value or throws its error.
    func value() throws -> T {
        done.wait()
        defer { done.signal() }
        return try result!.get()
    }
}
