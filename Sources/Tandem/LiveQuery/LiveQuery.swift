import Foundation
import Synchronization

/// One live query: re-runs its read (SQL, or records with their related records) after each
/// commit that touches a table it reads, and delivers the result when it differs from the last one.
///
/// Every run happens on the query's own serial queue, never on the thread that noticed the
/// change (the change observer's, or a writer's), so a slow query delays only itself: other
/// live queries and the sync engine's wake-up go on. A burst of changes during a run coalesces
/// into one more run.
final class LiveQuery<Value: Equatable & Sendable>: Sendable {
    private struct State {
        var running = false
        var dirty = false
        var last: Value?
        var finished = false
    }

    private let load: @Sendable (Transaction) throws -> Value
    private let readSet: Set<String>
    private weak let database: (any DatabaseReader)?
    private let deliver: @Sendable (Result<Value, Error>) -> Void
    private let queue = DispatchQueue(label: "tandem.live-query")
    private let state = Mutex(State())

    /// - Parameter load: the read, run in one read transaction each time.
    init(
        database: any DatabaseReader, readSet: Set<String>, load: @escaping @Sendable (Transaction) throws -> Value,
        deliver: @escaping @Sendable (Result<Value, Error>) -> Void
    ) {
        self.database = database
        self.load = load
        self.readSet = readSet
        self.deliver = deliver
    }

    func changed(_ change: DatabaseChange) {
        guard change.affects(readSet) else { return }
        schedule()
    }

    /// Runs the query on its queue, or once more after the run in progress.
    func schedule() {
        let start = state.withLock { s -> Bool in
            if s.finished { return false }
            if s.running { s.dirty = true; return false }
            s.running = true
            return true
        }
        guard start else { return }
        queue.async { self.run() }
    }

    func finish() {
        state.withLock { $0.finished = true }
    }

    /// Its database was closed or released: the query ends with `error`, delivered on its queue
    /// after a run in progress (a live query as a stream finishes instead of waiting for ever).
    func end(_ error: any Error) {
        let first = state.withLock { s -> Bool in
            defer { s.finished = true }
            return !s.finished
        }
        if first { queue.async { self.deliver(.failure(error)) } }
    }

    private func run() {
        while true {
            guard let database else {
                state.withLock { $0.finished = true }
                return
            }
            do {
                let value = try database.read(load)
                let emit = state.withLock { s -> Bool in
                    if s.last == value || s.finished { return false }
                    s.last = value
                    return true
                }
                if emit { deliver(.success(value)) }
            } catch {
                let first = state.withLock { s -> Bool in
                    defer { s.finished = true }
                    return !s.finished
                }
                // A query an older program reads after a newer one migrated the file says so.
                if first { deliver(.failure((database as? SharedDatabase)?.migratedPastDeclaredSchema() ?? error)) }
                return
            }
            let again = state.withLock { s -> Bool in
                if s.dirty && !s.finished { s.dirty = false; return true }
                s.running = false
                return false
            }
            if !again { return }
        }
    }
}
