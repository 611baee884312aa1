import Foundation

/// A server that the owner process syncs with.
///
/// The thread contract: methods are blocking and are called from the sync engine's own threads
/// (or, for ``DatabaseSync/once(with:backendName:)``, the caller's). ``upload(_:clientID:epoch:)``,
/// ``fetchChanges(after:limit:)`` and ``acknowledge(cursor:clientID:)`` are called one at a time,
/// in order, by the owner's sync thread; ``waitForChanges(after:timeout:)`` by another thread,
/// while those run; ``interruptWaits()`` from any thread. An implementation is therefore safe
/// to call from two threads at once, and needs no lock around its upload and fetch state.
public protocol SyncBackend: Sendable {
    /// A stable identifier of the backend's data set. A client database records the first
    /// backend it syncs with and refuses any other, because its download cursor and its
    /// uploaded transaction ids belong to that one.
    var identifier: String { get }

    /// Applies local write transactions in order. Idempotent per (client id, transaction id): a
    /// transaction already applied is skipped, so a retry after a crash has no second effect.
    /// - Parameters:
    ///   - transactions: whole transactions from the queue's head, oldest first.
    ///   - clientID: the uploading client's id, with each transaction id the idempotency key.
    ///   - epoch: the uploading owner's epoch (fencing token).
    /// - Throws: ``TandemError/staleEpoch(held:current:)`` when the backend has seen a newer epoch
    ///   for this client; any error for a failure to retry later.
    func upload(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws

    /// Changes after `cursor` (`""` for the beginning), oldest first, at most about `limit`
    /// changes; a server transaction is never split across batches. A client fetches until
    /// ``ChangeBatch/hasMore`` is false and applies what it fetched in one transaction; a batch
    /// with a ``ChangeBatch/fullSyncReason`` starts a full sync.
    func fetchChanges(after cursor: String, limit: Int) throws -> ChangeBatch

    /// Blocks until the backend holds changes after `cursor`, or `timeout` passes. Changes this
    /// backend uploaded itself may be left out: the owner downloads their answers after
    /// uploading (the sync engine's pass), and a wait that ends is called again. So two
    /// client databases that sync at the same time each use a backend object of their own (as
    /// ``DatabaseSync/start(url:)`` opens one), or one may not be woken by the other's uploads.
    /// - Returns: the cursor the next wait starts from, or nil on timeout: one at or after the
    ///   newest change now known, or `cursor` itself when the backend was told of changes after
    ///   it without locating them (a PostgreSQL notification). Either way a wait from it answers
    ///   for later changes only (a PostgreSQL wait from `cursor` itself may answer once more for
    ///   the same ones at its periodic look, every 10 s: an owner then runs a pass that finds
    ///   nothing), so that one change wakes the owner once.
    func waitForChanges(after cursor: String, timeout: Duration) throws -> String?

    /// Ends pending ``waitForChanges(after:timeout:)`` calls early. The backend stays usable.
    func interruptWaits()

    /// Tells the backend that `clientID` has applied everything up to `cursor`, so that it may
    /// compact its change log behind every client's position. Called after each applied
    /// download; a failure is ignored (the next download tells it again).
    func acknowledge(cursor: String, clientID: String) throws

    /// How long the owner waits after a failed pass (default ``RetryBackoff/standard``).
    var retryBackoff: RetryBackoff { get }
}

extension SyncBackend {
    /// Backends that keep their whole change log need no acknowledgements.
    public func acknowledge(cursor: String, clientID: String) throws {}

    /// How long the owner waits after a failed pass: ``RetryBackoff/standard`` unless the
    /// backend says otherwise (a connector's ``SyncConnector/retryBackoff``).
    public var retryBackoff: RetryBackoff { .standard }
}

/// Capped exponential backoff after failed passes: `initial` after the first failure, doubling
/// after each one more, at most `maximum`; a pass that succeeds starts it again.
public struct RetryBackoff: Sendable, Equatable {
    public var initial: Duration
    public var maximum: Duration

    public init(initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = max(initial, maximum)
    }

    /// 50 ms doubling to 5 s.
    public static let standard = RetryBackoff(initial: .milliseconds(50), maximum: .seconds(5))
}
