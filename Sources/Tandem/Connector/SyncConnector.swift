import Foundation

/// Sync through an application's own API: the owner hands the connector batches of whole
/// transactions from the upload queue, and takes the API's changes from it.
/// PowerSync's `PowerSyncBackendConnector.uploadData` is the model
/// (https://docs.powersync.com/client-sdk-references/swift#integrate-with-your-backend).
///
/// **Idempotency.** Each transaction carries this client's id and its transaction id, which
/// never change for the transaction: an API that records the pairs it applied, and answers
/// `applied` for one it sees again without applying it twice, makes every upload exactly-once
/// whatever fails between it and Tandem (a connection dropped after the API committed, an owner
/// killed mid-batch, a retry). An API that does not may apply a transaction twice.
///
/// **Fencing.** Each batch carries the owner's epoch (``UploadBatch/epoch``), which only grows.
/// The API keeps the highest epoch it has seen per client id and refuses a batch with a lower
/// one (the connector then throws ``TandemError/staleEpoch(held:current:)``): an owner that lost
/// ownership while paused cannot apply a batch after its successor did. Locally, a batch is
/// removed from the queue only under the owner's epoch as well.
///
/// **Retry contract** (``UploadOutcome``): an API that cannot take a batch now (a network
/// error, a timeout, a 5xx answer) is asked again with capped exponential backoff
/// (``retryBackoff``: 50 ms doubling to 5 s unless the connector says otherwise), the batch unchanged; a transaction the API refuses for good (a 4xx
/// answer: 409 conflict, 422 invalid) is set aside with the API's reason (`tandem crud`, the
/// status) and the rest goes on. The status shows the last failure and when the next try is due.
///
/// **Where calls run.** The sync owner calls one method at a time, each as a task whose preferred
/// executor is a thread of the connector's own (`Task(executorPreference:)`), so an app whose
/// async code holds Swift's shared pool does not hold up sync; block in a method only as long
/// as an answer takes, and never for longer than ``timeout``.
public protocol SyncConnector: Sendable {
    /// A stable name of the API's data set, recorded by the client database, which refuses to
    /// sync with another one afterwards (the API's base URL, say).
    var identifier: String { get }

    /// Sends `batch` to the API.
    /// - Returns: one outcome per transaction of the batch, in any order; a transaction
    ///   without one is treated as ``UploadOutcome/Kind/retryLater(reason:)``.
    /// - Throws: ``TandemError/staleEpoch(held:current:)`` when the API has seen a newer epoch
    ///   for this client; any other error when the batch could not be sent or answered (retried).
    func upload(_ batch: UploadBatch) async throws -> [UploadOutcome]

    /// The API's changes after `cursor` (`""` for everything), oldest first, at most about
    /// `limit`. The default has none: an API that only takes uploads, or sends its rows by
    /// payload pulls.
    func fetchChanges(after cursor: String, limit: Int) async throws -> ChangeBatch

    /// How often the owner asks for changes when nothing else wakes it (the default, 5 s).
    var pollInterval: Duration { get }

    /// How long one call may take before it is abandoned and counted as a failure to retry
    /// (the default, 60 s).
    var timeout: Duration { get }

    /// The fewest changes one ``fetchChanges(after:limit:)`` is asked for (the default, 10,000):
    /// each call is a request to the API (or a run of a connector program), so a backlog of
    /// answers comes down in few of them.
    var fetchPageSize: Int { get }

    /// How long the owner waits after a batch failed to go up before it tries again (the
    /// default, ``RetryBackoff/standard``: 50 ms doubling to 5 s).
    var retryBackoff: RetryBackoff { get }

    /// The connector's payload pulls (``PayloadPull``), run by
    /// ``SyncSession/pullInBackground(every:)`` and `tandem sync --pull`; none by default.
    var pulls: [PayloadPull] { get }
}

extension SyncConnector {
    public func fetchChanges(after cursor: String, limit: Int) async throws -> ChangeBatch {
        ChangeBatch(changes: [], nextCursor: cursor, hasMore: false)
    }

    public var pollInterval: Duration { .seconds(5) }
    public var timeout: Duration { .seconds(60) }
    public var fetchPageSize: Int { 10_000 }
    public var retryBackoff: RetryBackoff { .standard }
}

/// A batch of whole transactions for ``SyncConnector/upload(_:)``, in queue order.
public struct UploadBatch: Sendable {
    /// This client database's id (a UUID): with a transaction id, the key of idempotency.
    public var clientID: String
    /// The uploading owner's epoch (fencing token).
    public var epoch: Int64
    public var transactions: [CrudTransaction]

    public init(clientID: String, epoch: Int64, transactions: [CrudTransaction]) {
        self.clientID = clientID
        self.epoch = epoch
        self.transactions = transactions
    }
}

/// What the API did with one transaction of a batch.
public struct UploadOutcome: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Applied now or before (a retry).
        case applied
        /// Refused for good (a 4xx answer): the transaction is set aside with the reason.
        case refused(reason: String)
        /// Not applied, to be tried again (a 5xx answer, a lock): the batch is retried with backoff.
        case retryLater(reason: String)
    }

    /// The transaction's id (``CrudTransaction/transactionID``).
    public var transactionID: Int64
    public var kind: Kind

    public init(transactionID: Int64, _ kind: Kind) {
        self.transactionID = transactionID
        self.kind = kind
    }
}
