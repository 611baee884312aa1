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

/// Keeps a live query running; ``cancel()`` (or releasing the token) stops it.
public final class Observation: Sendable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Mutex(onCancel)
    }

    /// Stops the live query; no result is delivered after this returns, except one already being delivered.
    public func cancel() {
        let action = onCancel.withLock { a -> (@Sendable () -> Void)? in
            defer { a = nil }
            return a
        }
        action?()
    }

    deinit { cancel() }
}

extension SharedDatabase {
    /// Watches a query: the stream yields its result now, then again after every committed
    /// change, from this process or any other, to a table the query reads. Consecutive
    /// identical results are not repeated; bursts of commits coalesce.
    ///
    /// ```swift
    /// for try await rows in db.watch("SELECT count(*) AS n FROM notes WHERE done = ?", [0]) {
    ///     print(rows[0]["n"]!)
    /// }
    /// ```
    ///
    /// The read set is found with SQLite's authorizer when the SQL is prepared. Commits by
    /// clients that do not use Tandem (the `sqlite3` shell) are noticed by the backstop poll of
    /// ``Configuration/changePollInterval`` and refresh every live query.
    /// Cancelling the consuming task or dropping the stream stops the work; the stream holds the
    /// database weakly.
    /// - Throws (in the stream): ``SQLiteError`` for SQL that does not prepare or fails to run.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/set_authorizer.html
    public func watch(_ sql: String, _ arguments: [any DatabaseValueConvertible] = []) -> AsyncThrowingStream<[Row], Error> {
        let (stream, continuation) = AsyncThrowingStream<[Row], Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        do {
            let observation = try observe(sql, arguments) { result in
                switch result {
                case .success(let rows): continuation.yield(rows)
                case .failure(let error): continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in observation.cancel() }
        } catch {
            continuation.finish(throwing: error)
        }
        return stream
    }

    /// Watches a query with a callback, for code that runs on threads rather than tasks:
    /// `onChange` gets the result now and after every change that alters it, or one error after
    /// which the observation ends. Called on the query's own serial queue, one call at a time.
    /// - Returns: an ``Observation``; the query runs until it is cancelled or released.
    /// - Throws: ``SQLiteError`` when the SQL does not prepare; an error when the change observer cannot start.
    public func observe(_ sql: String, _ arguments: [any DatabaseValueConvertible] = [],
                        onChange: @escaping @Sendable (Result<[Row], Error>) -> Void) throws -> Observation {
        let tables = try readers.read { try $0.tablesRead(by: sql) }
        var readSet = tables
        for table in tables {
            readSet.insert("ps_data__" + table)
            readSet.insert("ps_data_local__" + table)
        }
        let query = LiveQuery(database: self, sql: sql, arguments: arguments.map(\.databaseValue), readSet: readSet, deliver: onChange)
        let token = try observer.subscribe { [weak query] change, _ in query?.changed(change) }
        query.schedule()
        return Observation { [weak self] in
            query.finish()
            self?.observer.unsubscribe(token)
        }
    }

    /// Every committed change, from this process or any other, as it is noticed. Nothing is
    /// dropped: while the consumer is behind, changes merge into one waiting element (the union
    /// of their tables, or unknown when any was).
    /// - Throws: when the change observer cannot start (an unreadable file).
    public func changes() throws -> AsyncStream<DatabaseChange> {
        let (stream, continuation) = AsyncStream<DatabaseChange>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let yielding = Mutex(())
        let token = try observer.subscribe { change, _ in
            yielding.withLock { _ in
                // A full buffer hands back the element it replaced: put back both, merged.
                if case .dropped(let older) = continuation.yield(change) {
                    _ = continuation.yield(older.merged(with: change))
                }
            }
        }
        continuation.onTermination = { [weak self] _ in self?.observer.unsubscribe(token) }
        return stream
    }

    /// Calls `handler` on an internal thread for every committed change; returns a token for
    /// ``removeChangeHandler(_:)``. For code that waits on threads rather than tasks.
    public func addChangeHandler(_ handler: @escaping @Sendable (DatabaseChange) -> Void) throws -> UInt64 {
        try observer.subscribe { change, _ in handler(change) }
    }

    /// Why this process notices other processes' commits by polling (every
    /// ``Configuration/changePollInterval``) rather than at once: inotify is unavailable (the
    /// user's inotify instances or watches are used up, or the filesystem has none). Nil while
    /// inotify works or before anything observes changes. Live queries and sync keep working
    /// either way, only later.
    ///
    /// Related documentation: https://man7.org/linux/man-pages/man7/inotify.7.html (limits in /proc/sys/fs/inotify)
    public var changeWakeupUnavailableReason: String? { observer.pollingReason }

    /// Stops calling the handler registered with ``addChangeHandler(_:)`` under `token`.
    public func removeChangeHandler(_ token: UInt64) {
        observer.unsubscribe(token)
    }
}
