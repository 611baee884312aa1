import Foundation
import Synchronization

/// A ``SyncConnector`` as the sync engine's ``SyncBackend``: each call runs the connector's
/// async method and waits for it (bounded by ``SyncConnector/timeout``), outcomes become the
/// engine's errors, and waits for changes poll at ``SyncConnector/pollInterval``.
///
/// Outcomes: all applied, the batch is done. The first transaction not applied decides: refused
/// throws ``TandemError/uploadRejected(table:rowID:reason:)`` naming its first row, upon which
/// the engine sends the batch's transactions one at a time (the applied ones again: the API
/// answers `applied` without applying them twice) and sets aside the refused one; retry later
/// (or no outcome at all) throws ``ConnectorFailure``, and the engine retries with backoff.
public final class ConnectorBackend: SyncBackend, @unchecked Sendable {
    // Invariant: `interruptions` is read and written with `condition` locked.
    public let connector: any SyncConnector
    private let condition = NSCondition()
    private var interruptions = 0
    /// Where the connector's calls run (their task's preferred executor).
    private let thread = ConnectorThread(name: "tandem.connector")

    public init(_ connector: any SyncConnector) {
        self.connector = connector
    }

    deinit { thread.stop() }

    public var identifier: String { connector.identifier }
    public var retryBackoff: RetryBackoff { connector.retryBackoff }

    public func upload(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws {
        guard !transactions.isEmpty else { return }
        let batch = UploadBatch(clientID: clientID, epoch: epoch, transactions: transactions)
        let connector = self.connector
        let outcomes = try wait(for: "an upload of \(transactions.count) transaction(s)") { try await connector.upload(batch) }
        var byID: [Int64: UploadOutcome.Kind] = [:]
        let sent = Set(transactions.map(\.transactionID))
        for outcome in outcomes {
            guard sent.contains(outcome.transactionID) else {
                throw ConnectorFailure("\(connector.identifier) answered for transaction \(outcome.transactionID), which the batch did not hold")
            }
            guard byID[outcome.transactionID] == nil else {
                throw ConnectorFailure("\(connector.identifier) answered twice for transaction \(outcome.transactionID)")
            }
            byID[outcome.transactionID] = outcome.kind
        }
        for transaction in transactions {
            switch byID[transaction.transactionID] {
            case .applied:
                continue
            case .refused(let reason):
                let first = transaction.entries.first
                throw TandemError.uploadRejected(table: first?.table ?? "", rowID: first?.rowID ?? "", reason: reason)
            case .retryLater(let reason):
                throw ConnectorFailure("\(connector.identifier) asked to retry transaction \(transaction.transactionID) later: \(reason)")
            case nil:
                throw ConnectorFailure("\(connector.identifier) gave no outcome for transaction \(transaction.transactionID); the batch is retried")
            }
        }
    }

    public func fetchChanges(after cursor: String, limit: Int) throws -> ChangeBatch {
        let connector = self.connector
        let limit = max(limit, connector.fetchPageSize)
        return try wait(for: "a fetch of changes") { try await connector.fetchChanges(after: cursor, limit: limit) }
    }

    /// Waits one poll interval (or `timeout`, if shorter, then nil), or until interrupted; then
    /// answers `cursor`: there may be changes, which the pass that follows fetches.
    public func waitForChanges(after cursor: String, timeout: Duration) throws -> String? {
        let poll = min(connector.pollInterval, timeout)
        let deadline = Date(timeIntervalSinceNow: poll.seconds)
        condition.lock()
        defer { condition.unlock() }
        let before = interruptions
        while interruptions == before, condition.wait(until: deadline) {}
        if interruptions != before { return nil }
        return poll < timeout ? cursor : nil
    }

    public func interruptWaits() {
        condition.lock()
        interruptions += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Runs `body` as a task on the connector's own thread and waits for it up to the
    /// connector's timeout and a second more (a connector that keeps its own timeout reports it
    /// first), then cancels it; `bounded` false waits for as long as it takes.
    func wait<T: Sendable>(for what: String, bounded: Bool = true, _ body: @escaping @Sendable () async throws -> T) throws -> T {
        let result = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = Task(executorPreference: thread) {
            let value = await Result { try await body() }
            result.withLock { $0 = value }
            done.signal()
        }
        let limit = connector.timeout
        guard bounded else {
            done.wait()
            return try result.withLock { $0! }.get()
        }
        guard done.wait(timeout: .now() + .nanoseconds(Int((min(limit.seconds, 86_400) + 1) * 1e9))) == .success else {
            task.cancel()
            throw ConnectorFailure("\(connector.identifier) did not finish \(what) within \(limit)")
        }
        return try result.withLock { $0! }.get()
    }
}

/// A connector's failure that sync retries with backoff: no answer in time, an answer that does
/// not fit the batch, or the API asking to retry later.
public struct ConnectorFailure: Error, CustomStringConvertible, BackendConnectionError {
    public let description: String
    public init(_ description: String) { self.description = description }
    public var isConnectionFailure: Bool { true }
}

extension DatabaseSync {
    /// Offers this process as the sync owner, syncing through `connector` (the app's own API):
    /// ``start(with:backendName:)`` with a ``ConnectorBackend``.
    /// - Throws: as ``start(with:backendName:)``.
    public func start(connector: any SyncConnector) throws -> SyncSession {
        try start(with: ConnectorBackend(connector), backendName: connector.identifier)
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
