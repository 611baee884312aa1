import Foundation
import Synchronization

/// Hands changes to one change handler the way live queries get theirs: on a serial queue, one
/// call at a time, in commit order, never on the thread that noticed the change (the change
/// observer's, or a writer's, which therefore never waits for a handler). While the handler is
/// behind, the changes that arrive merge into one (the union of their tables, or unknown when
/// any was): nothing is dropped, and a slow handler delays only itself.
final class ChangeDelivery: Sendable {
    private struct State {
        var running = false
        var waiting: DatabaseChange?
        var finished = false
    }

    private let handler: @Sendable (DatabaseChange) -> Void
    private let queue: DispatchQueue
    private let state = Mutex(State())

    init(on queue: DispatchQueue, _ handler: @escaping @Sendable (DatabaseChange) -> Void) {
        self.queue = queue
        self.handler = handler
    }

    /// Delivers `change` after those before it; merged into the waiting one if the handler is behind.
    func deliver(_ change: DatabaseChange) {
        let start = state.withLock { s -> Bool in
            if s.finished { return false }
            s.waiting = s.waiting.map { $0.merged(with: change) } ?? change
            if s.running { return false }
            s.running = true
            return true
        }
        guard start else { return }
        queue.async { self.drain() }
    }

    /// No call starts after this one (a call in progress ends as it would).
    func finish() {
        state.withLock { $0.finished = true }
    }

    private func drain() {
        while true {
            let next = state.withLock { s -> DatabaseChange? in
                defer { s.waiting = nil }
                guard !s.finished, let change = s.waiting else {
                    s.running = false
                    return nil
                }
                return change
            }
            guard let next else { return }
            handler(next)
        }
    }
}
