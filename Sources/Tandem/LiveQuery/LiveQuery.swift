import Foundation
import Synchronization

/// One live query: re-runs its SQL after each commit that touches a table it reads, and
/// delivers the result when it differs from the last one.
///
/// Every run happens on the query's own serial queue, never on the thread that noticed the
/// change (the change observer's, or a writer's), so a slow query delays only itself: other
/// live queries and the sync engine's wake-up go on. A burst of changes during a run coalesces
/// into one more run.
final class LiveQuery: Sendable {
    private struct State {
        var running = false
        var dirty = false
        var last: [Row]?
        var finished = false
    }

    private let sql: String
    private let arguments: [DatabaseValue]
    private let readSet: Set<String>
    private weak let database: SharedDatabase?
    private let deliver: @Sendable (Result<[Row], Error>) -> Void
    private let queue = DispatchQueue(label: "tandem.live-query")
    private let state = Mutex(State())

    init(database: SharedDatabase, sql: String, arguments: [DatabaseValue], readSet: Set<String>,
         deliver: @escaping @Sendable (Result<[Row], Error>) -> Void) {
        self.database = database
        self.sql = sql
        self.arguments = arguments
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

    private func run() {
        while true {
            guard let database else {
                state.withLock { $0.finished = true }
                return
            }
            do {
                let rows = try database.read { try $0.fetchAll(sql, arguments) }
                let emit = state.withLock { s -> Bool in
                    if s.last == rows || s.finished { return false }
                    s.last = rows
                    return true
                }
                if emit { deliver(.success(rows)) }
            } catch {
                let first = state.withLock { s -> Bool in
                    defer { s.finished = true }
                    return !s.finished
                }
                if first { deliver(.failure(error)) }
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
