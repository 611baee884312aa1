import Foundation
import Synchronization

/// Work a session runs every `interval` while its process owns sync, on a thread of its own
/// (background verification, pulls): it waits the interval (or a cancel) on a condition, runs
/// the work when the process owns sync, and ends when cancelled or when the session stops.
final class OwnerIntervalWork: Sendable {
    private weak let session: SyncSession?
    private let interval: Duration
    private let name: String
    private let work: @Sendable (SyncSession) -> Void
    private let cancelled = Mutex(false)
    private let condition = NSCondition()

    init(session: SyncSession, interval: Duration, name: String, work: @escaping @Sendable (SyncSession) -> Void) {
        self.session = session
        self.interval = max(interval, .milliseconds(10))
        self.name = name
        self.work = work
    }

    /// Starts the thread; the returned cancellable stops it (as releasing it does).
    func start() -> AnyDatabaseCancellable {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
        return AnyDatabaseCancellable { [self] in cancel() }
    }

    private func cancel() {
        condition.lock()
        cancelled.withLock { $0 = true }
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            let deadline = Date(timeIntervalSinceNow: interval.seconds)
            while !cancelled.withLock({ $0 }), condition.wait(until: deadline) {}
            condition.unlock()
            guard !cancelled.withLock({ $0 }), let session, !session.hasStopped else { return }
            if session.epoch != nil { work(session) }
        }
    }
}
