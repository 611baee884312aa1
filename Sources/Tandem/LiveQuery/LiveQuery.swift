import Foundation
import Synchronization

/// One live query: re-runs its SQL after each commit that touches a table it reads, and yields
/// the result when it differs from the last one.
///
/// Re-runs happen on the query's own serial queue; a burst of changes during a run coalesces
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
    private let continuation: AsyncThrowingStream<[Row], Error>.Continuation
    private let queue = DispatchQueue(label: "tandem.live-query")
    private let state = Mutex(State())

    init(database: SharedDatabase, sql: String, arguments: [DatabaseValue], readSet: Set<String>,
         continuation: AsyncThrowingStream<[Row], Error>.Continuation) {
        self.database = database
        self.sql = sql
        self.arguments = arguments
        self.readSet = readSet
        self.continuation = continuation
    }

    func changed(_ change: DatabaseChange) {
        guard change.affects(readSet) else { return }
        schedule()
    }

    /// Runs the query now, or once more after the run in progress.
    func schedule() {
        let start = state.withLock { s -> Bool in
            if s.finished { return false }
            if s.running { s.dirty = true; return false }
            s.running = true
            return true
        }
        if start { queue.async { self.run() } }
    }

    func finish() {
        state.withLock { $0.finished = true }
    }

    private func run() {
        while true {
            guard let database else {
                continuation.finish()
                return
            }
            do {
                let rows = try database.read { try $0.fetchAll(sql, arguments) }
                let emit = state.withLock { s -> Bool in
                    if s.last == rows { return false }
                    s.last = rows
                    return !s.finished
                }
                if emit { continuation.yield(rows) }
            } catch {
                state.withLock { $0.finished = true }
                continuation.finish(throwing: error)
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
        let values = arguments.map(\.databaseValue)
        do {
            let tables = try readers.read { try $0.tablesRead(by: sql) }
            var readSet = tables
            for table in tables {
                readSet.insert("ps_data__" + table)
                readSet.insert("ps_data_local__" + table)
            }
            let query = LiveQuery(database: self, sql: sql, arguments: values, readSet: readSet, continuation: continuation)
            let token = try observer.subscribe { [weak query] change in query?.changed(change) }
            continuation.onTermination = { [weak self] _ in
                query.finish()
                self?.observer.unsubscribe(token)
            }
            query.schedule()
        } catch {
            continuation.finish(throwing: error)
        }
        return stream
    }

    /// Every committed change, from this process or any other, as it is noticed.
    /// - Throws: when the change observer cannot start (no inotify, unreadable file).
    public func changes() throws -> AsyncStream<DatabaseChange> {
        let (stream, continuation) = AsyncStream<DatabaseChange>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let token = try observer.subscribe { continuation.yield($0) }
        continuation.onTermination = { [weak self] _ in self?.observer.unsubscribe(token) }
        return stream
    }

    /// Calls `handler` on an internal thread for every committed change; returns a token for
    /// ``removeChangeHandler(_:)``. For code that waits on threads rather than tasks.
    public func addChangeHandler(_ handler: @escaping @Sendable (DatabaseChange) -> Void) throws -> UInt64 {
        try observer.subscribe(handler)
    }

    public func removeChangeHandler(_ token: UInt64) {
        observer.unsubscribe(token)
    }
}
