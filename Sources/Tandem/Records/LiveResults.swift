import Foundation
import Observation

/// The latest results of a record query, for code that renders state: an `@Observable` holder
/// that a live query keeps current (from this process or any other).
///
/// It lives on the main actor: the live query runs on its own queue and hands each result to
/// the main actor (in order, through the main dispatch queue), so views and other main-actor
/// code read ``records`` without a race, and SwiftUI or `withObservationTracking` see each
/// change there.
///
/// ```swift
/// let open = try LiveResults(db, RecordQuery<TodoItem>(#Predicate { !$0.done }))
/// withObservationTracking { render(open.records) } onChange: { … }
/// ```
@MainActor
@Observable
public final class LiveResults<R: Record> {
    /// The latest records, in the query's order.
    public private(set) var records: [R] = []
    /// The error that ended the live query, if one did.
    public private(set) var error: (any Error)?
    @ObservationIgnored private var observation: AnyDatabaseCancellable?

    /// Starts the live query; the first results arrive shortly after (see ``records``).
    /// - Parameters:
    ///   - database: any database (``SharedDatabase``, ``InMemoryDatabase``).
    ///   - query: the records to follow.
    /// - Throws: what ``DatabaseReader/observe(_:throttle:onChange:)`` throws.
    public init(_ database: some DatabaseReader, _ query: RecordQuery<R>) throws {
        observation = try database.observe(query) { [weak self] result in
            DispatchQueue.main.async {
                MainActor.assumeIsolated {
                    switch result {
                    case .success(let records): self?.records = records
                    case .failure(let error): self?.error = error
                    }
                }
            }
        }
    }

    /// Stops the live query.
    public func cancel() { observation?.cancel() }

    isolated deinit { observation?.cancel() }
}
