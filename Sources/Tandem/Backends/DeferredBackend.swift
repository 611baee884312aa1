import Foundation
import Synchronization

/// A backend opened at its first use and again after every failure to open it, so that an app
/// starts, writes locally, queues uploads and runs live queries while its server is down (a host
/// that boots before its database): each sync pass that cannot reach it fails as
/// ``SyncFailure/Kind/backendUnavailable`` with the reason, backs off, and tries again.
///
/// Opening checks the database's backend binding as ``DatabaseSync/openBackend(_:)`` does,
/// and records it after.
final class DeferredBackend: SyncBackend, @unchecked Sendable {
    // Invariant: `opened` is set once, under its mutex, by the holder of `opening` (so a stop
    // that interrupts waits never waits for a connection attempt); the database outlives the
    // session that holds this backend.
    private let url: BackendURL
    private let database: SharedDatabase
    private let opened = Mutex<(any SyncBackend)?>(nil)
    private let opening = NSLock()

    init(url: BackendURL, database: SharedDatabase) {
        self.url = url
        self.database = database
    }

    /// The backend, opened now if it was not yet.
    func backend() throws -> any SyncBackend {
        if let backend = opened.withLock({ $0 }) { return backend }
        opening.lock()
        defer { opening.unlock() }
        if let backend = opened.withLock({ $0 }) { return backend }
        let backend = try database.sync.openBackend(url)
        try database.bind(to: backend, name: url.name)
        opened.withLock { $0 = backend }
        return backend
    }

    /// The opened backend's identifier; empty while it has not been reached.
    var identifier: String { opened.withLock { $0?.identifier } ?? "" }

    func upload(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws {
        try backend().upload(transactions, clientID: clientID, epoch: epoch)
    }

    func fetchChanges(after cursor: String, limit: Int) throws -> ChangeBatch {
        try backend().fetchChanges(after: cursor, limit: limit)
    }

    func waitForChanges(after cursor: String, timeout: Duration) throws -> String? {
        try backend().waitForChanges(after: cursor, timeout: timeout)
    }

    func interruptWaits() {
        opened.withLock { $0 }?.interruptWaits()
    }

    func acknowledge(cursor: String, clientID: String) throws {
        try opened.withLock { $0 }?.acknowledge(cursor: cursor, clientID: clientID)
    }
}

extension DatabaseSync {
    /// Offers this process as the sync owner, with the backend `url` names opened when this
    /// process owns sync and the backend can be reached: while it cannot, the app runs locally
    /// and its status says ``SyncFailure/Kind/backendUnavailable`` with the reason; sync begins
    /// when the backend comes. A backend that turns out to be another one than this database
    /// syncs with is refused each time (``TandemError/invalidBackend(_:)``, in the status).
    ///
    /// ```swift
    /// let session = try db.sync.start(url: try BackendURL("postgres://app@db.example.com/app"))
    /// ```
    /// - Throws: when the owner lock file cannot be opened, or the database was opened read-only.
    public func start(url: BackendURL) throws -> SyncSession {
        guard database.writer != nil else { throw TandemError.readOnly(path: database.path) }
        return try SyncSession(database: database, backend: DeferredBackend(url: url, database: database), backendName: url.name)
    }

    /// Runs one upload-then-download pass with the backend `url` names if no other process owns
    /// sync, then releases ownership. A failure to reach the backend, or a failed pass, is
    /// recorded in the status (``SyncStatus/lastFailure``) as the app's failures are.
    /// - Returns: (transactions uploaded, CRUD entries uploaded, changes downloaded).
    /// - Throws: ``TandemError/notOwner(path:ownerPID:)`` when another process owns sync;
    ///   ``TandemError/invalidBackend(_:)`` when the database syncs with another backend (then
    ///   nothing is created or changed); backend errors.
    public func once(url: BackendURL) throws -> (transactions: Int, entries: Int, downloaded: Int) {
        guard database.writer != nil else { throw TandemError.readOnly(path: database.path) }
        let backend: any SyncBackend
        do {
            backend = try openBackend(url)
        } catch  where SyncFailure(error, databasePath: database.path).kind == .backendUnavailable {
            try? database.recordFailureAsOwner(error, backendName: url.name)
            throw error
        }
        defer { backend.interruptWaits() }
        return try once(with: backend, backendName: url.name)
    }
}

/// Verification through the backend once it is open (``VerifyingBackend``); one that does not
/// verify is refused with ``TandemError/verificationFailed(_:)``.
extension DeferredBackend: VerifyingBackend {
    private func verifying() throws -> any VerifyingBackend {
        guard let backend = try backend() as? any VerifyingBackend else {
            throw TandemError.verificationFailed("the backend \(url.name) cannot verify (it does not compute checksums)")
        }
        return backend
    }

    func checksums(of table: TableSchema, bucketCount: Int) throws -> [Int: RowChecksum] {
        try verifying().checksums(of: table, bucketCount: bucketCount)
    }

    func rowDigests(of table: TableSchema, bucketCount: Int, buckets: [Int]) throws -> [RowDigest] {
        try verifying().rowDigests(of: table, bucketCount: bucketCount, buckets: buckets)
    }

    func changed(after cursor: String, table: String, ids: [String]) throws -> [String] {
        try verifying().changed(after: cursor, table: table, ids: ids)
    }

    func rows(of table: TableSchema, ids: [String]) throws -> [(id: String, data: String)] {
        try verifying().rows(of: table, ids: ids)
    }
}
