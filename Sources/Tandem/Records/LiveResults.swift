import Foundation
import Observation
import Synchronization

/// The latest results of a record query, for code that renders state: an `@Observable` holder
/// that a live query keeps current (from this process or any other).
///
/// ```swift
/// let open = try LiveResults(db, RecordQuery<TodoItem>(#Predicate { !$0.done }))
/// withObservationTracking { render(open.records) } onChange: { … }
/// ```
@Observable
public final class LiveResults<R: Record>: @unchecked Sendable {
    // @unchecked: `records` and `error` are written only from the live query's serial queue and
    // read under the Observation module's access tracking.
    /// The latest records, in the query's order.
    public private(set) var records: [R] = []
    /// The error that ended the live query, if one did.
    public private(set) var error: (any Error)?
    @ObservationIgnored private var observation: LiveObservation?

    /// Starts the live query; the first results arrive shortly after (see ``records``).
    /// - Throws: what ``SharedDatabase/observe(_:onChange:)`` throws.
    public init(_ database: SharedDatabase, _ query: RecordQuery<R>) throws {
        observation = try database.observe(query) { [weak self] result in
            switch result {
            case .success(let records): self?.records = records
            case .failure(let error): self?.error = error
            }
        }
    }

    /// Stops the live query.
    public func cancel() { observation?.cancel() }

    deinit { observation?.cancel() }
}
