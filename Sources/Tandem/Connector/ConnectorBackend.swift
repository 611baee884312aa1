import Foundation
import Synchronization

/// A ``SyncConnector`` as the sync engine's ``SyncBackend``: each call runs the connector's
/// async method and waits for it (bounded by ``SyncConnector/timeout``), outcomes become the
/// engine's errors, and waits for changes poll at ``SyncConnector/pollInterval``.
///
/// Outcomes: all applied, the batch is done. Some applied and some refused: ``PartialUpload``,
/// upon which the engine completes the applied ones and sets aside the refused ones, in order,
/// up to the first asked to retry later (or given no outcome), which ends the pass with its
/// ``ConnectorFailure`` (retried with backoff). A batch whose first transaction is refused
/// before any is applied says only that something in it is refused (an answer for the whole
/// batch does that): ``TandemError/uploadRejected(table:rowID:reason:)``, upon which the engine
/// sends the batch's transactions one at a time (the applied ones again: the API answers
/// `applied` without applying them twice) and sets aside the refused ones.
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
        var applied = Set<Int64>(), refused: [Int64: String] = [:]
        var retry: ConnectorFailure?
        for transaction in transactions where retry == nil {
            switch byID[transaction.transactionID] {
            case .applied: applied.insert(transaction.transactionID)
            case .refused(let reason): refused[transaction.transactionID] = reason
            case .retryLater(let reason):
                retry = ConnectorFailure("\(connector.identifier) asked to retry transaction \(transaction.transactionID) later: \(reason)")
            case nil:
                retry = ConnectorFailure("\(connector.identifier) gave no outcome for transaction \(transaction.transactionID); the batch is retried")
            }
        }
        if refused.isEmpty, let retry, applied.isEmpty { throw retry }
        guard !refused.isEmpty || retry != nil else { return }
        // Refused from its first transaction with none applied, the answer says no more than
        // "something in it is refused" (an answer for the whole batch reads so): the engine
        // then finds the refused ones by sending the transactions one at a time.
        if applied.isEmpty, let first = transactions.first, let reason = refused[first.transactionID] { throw first.refused(reason) }
        throw PartialUpload(applied: applied, refused: refused, retry: retry)
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
