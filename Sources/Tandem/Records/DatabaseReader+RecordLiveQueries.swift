import Foundation
import Synchronization

/// Typed live queries: records now, and again after every change (from any process) that
/// changes the result.
extension DatabaseReader {
    /// Watches a record query: `[R]` now, then after every committed change to its table that
    /// alters the result; identical results are not repeated. See ``watch(_:_:)`` for what a
    /// live query notices.
    ///
    /// ```swift
    /// for try await open in db.watch(RecordQuery<TodoItem>(#Predicate { !$0.done })) { render(open) }
    /// ```
    /// - Parameter query: the records to watch.
    /// - Parameter throttle: at most one result per this interval (the latest wins); nil
    ///   delivers every changed result at once.
    public func watch<R: Record>(_ query: RecordQuery<R>, throttle: Duration? = nil) -> AsyncThrowingStream<[R], Error> {
        AnyDatabaseCancellable.stream { try observe(query, throttle: throttle, onChange: $0) }
    }

    /// Watches one record by id: the record, or nil while there is none.
    public func watch<R: Record>(_ type: R.Type, id: String) -> AsyncThrowingStream<R?, Error> {
        AnyDatabaseCancellable.stream { deliver in
            try observe(RecordQuery<R>(#Predicate { $0.id == id })) { deliver($0.map(\.first)) }
        }
    }

    /// A record query as a live query with a callback (on the query's own queue); a result equal
    /// to the last one delivered (same rows, same related rows, same order) is not delivered
    /// again. Changes to the tables of related records (to-one relationships) wake it too.
    public func observe<R: Record>(
        _ query: RecordQuery<R>, throttle: Duration? = nil,
        onChange: @escaping @Sendable (Result<[R], Error>) -> Void
    ) throws -> AnyDatabaseCancellable {
        let onChange = throttle.map { Throttle(interval: $0.seconds, deliver: onChange).callAsFunction } ?? onChange
        let layout = try read { try $0.checkedLayout(R.self) }
        let plan = try RecordSQL.make(query, layout: layout)
        let tables = try read { tx in try tx.connection.tablesRead(by: plan.select.text).union(layout.relations.map { try RecordLayout.of($0.target).tableName }) }
        let last = Mutex<[Row]?>(nil)
        let load: @Sendable (Transaction) throws -> LoadedRecords<R> = { tx in
            let rows = try tx.rows(plan)
            let related = try RelatedRecords.load(for: rows, layout: layout, in: tx)
            // A row that does not decode is reported, and the live query goes on.
            let records = Result { try related.decode(R.self, rows: rows, layout: layout) }
            return LoadedRecords(rows: rows, related: related, records: records)
        }
        return try observe(readSet: tables, load: load) { result in
            switch result {
            case .failure(let error): onChange(.failure(error))
            case .success(let loaded):
                do {
                    let (rows, records) = (loaded.rows, try loaded.records.get())
                    var pairs = zip(rows, records).map { ($0, $1) }
                    if plan.filterInSwift, let predicate = query.predicate { pairs = try pairs.filter { try predicate.evaluate($0.1) } }
                    if plan.sortInSwift {
                        if !query.sortBy.isEmpty {
                            // The pairs themselves, not looked up again by id: Swift's `String`
                            // equality would take two ids SQLite keeps apart for one.
                            pairs = pairs.sorted { a, b in
                                for descriptor in query.sortBy {
                                    switch descriptor.compare(a.1, b.1) {
                                    case .orderedAscending: return true
                                    case .orderedDescending: return false
                                    case .orderedSame: continue
                                    }
                                }
                                return false
                            }
                        }
                        pairs = Array(pairs.dropFirst(query.offset).prefix(query.limit ?? .max))
                    }
                    // What the delivered records show: their rows and their related rows only.
                    let shown = pairs.map(\.0) + loaded.related.rows(relatedTo: pairs.map(\.0))
                    let isNew = last.withLock { previous -> Bool in
                        defer { previous = shown }
                        return previous != shown
                    }
                    if isNew { onChange(.success(pairs.map(\.1))) }
                } catch {
                    onChange(.failure(error))
                }
            }
        }
    }
}

/// Records with the rows they came from; equal when the rows and the related rows are.
struct LoadedRecords<R: Record>: Equatable, @unchecked Sendable {
    // @unchecked: `related` holds records of Sendable types and rows, immutable once loaded.
    let rows: [Row]
    let related: RelatedRecords
    let records: Result<[R], any Error>

    static func == (a: LoadedRecords, b: LoadedRecords) -> Bool { a.rows == b.rows && a.related.rows == b.related.rows }
}

/// Delivers at most one value per interval: the first at once, later ones no sooner than
/// `interval` seconds after the one before, the latest winning.
final class Throttle<Value: Sendable>: @unchecked Sendable {
    // Invariant: `pending` and `lastDelivery` are guarded by `lock`; `deliver` runs on `queue`, in order.
    private let interval: Double
    private let deliver: @Sendable (Value) -> Void
    private let queue = DispatchQueue(label: "tandem.throttle")
    private let lock = NSLock()
    private var pending: Value?
    private var lastDelivery: DispatchTime?

    init(interval: Double, deliver: @escaping @Sendable (Value) -> Void) {
        self.interval = max(0, interval)
        self.deliver = deliver
    }

    func callAsFunction(_ value: Value) {
        lock.lock()
        let scheduled = pending != nil
        pending = value
        let earliest = lastDelivery.map { $0 + interval } ?? .now()
        lock.unlock()
        if scheduled { return }  // a delivery is already due; it takes the latest value
        queue.asyncAfter(deadline: max(earliest, .now())) { [self] in
            lock.lock()
            let value = pending
            pending = nil
            lastDelivery = .now()
            lock.unlock()
            if let value { deliver(value) }
        }
    }
}
