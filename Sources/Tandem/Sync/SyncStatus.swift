import Foundation

/// The sync state of a database, stored in it so any process can read it.
public struct SyncStatus: Sendable, Hashable, Codable {
    /// The owner reached the backend on its last attempt.
    public var connected = false
    /// A live, connected owner has CRUD entries to upload.
    public var uploading = false
    /// A live owner is applying a download that continues in further batches.
    public var downloading = false
    /// When the last complete upload-and-download pass finished.
    public var lastSyncedAt: Date?
    /// True once a download pass has completed since the database was created.
    public var hasSynced = false
    /// The last failure, typed; cleared by the next success.
    public var lastFailure: SyncFailure?
    /// When the owner tries again after ``lastFailure`` (capped exponential backoff: 50 ms
    /// doubling to 5 s); nil after a success.
    public var nextRetryAt: Date?
    /// The last failure's message (``lastFailure``'s), nil after a success.
    public var lastError: String? { lastFailure?.message }
    /// The backend URL the owner syncs with.
    public var backend: String?
    /// CRUD entries waiting for upload (read from `ps_crud`).
    public var pendingUploads = 0
    /// Transactions the backend refused for good, set aside until retried or discarded
    /// (``UploadQueue/rejected()``).
    public var rejectedUploads = 0
    /// The transaction set aside last, with the backend's reason; nil when none is set aside.
    /// Its rows hold the server's state after the next download (a full sync); the refused
    /// change waits in the set-aside list until it is retried or discarded.
    public var lastRefusal: RejectedTransaction?
    /// The process id of the live owner; nil when no process owns sync.
    public var ownerPID: Int32?
    /// The current epoch (fencing token); each new owner increments it.
    public var epoch: Int64 = 0
    /// When the owner first saw the oldest entry still queued; nil when nothing is queued.
    public var uploadPendingSince: Date?
    /// When the backend announced changes the owner has not applied yet; nil when none wait.
    public var downloadPendingSince: Date?
    /// How long the oldest queued entry has waited for upload (zero when nothing is queued).
    public var uploadLag: Duration { Self.since(uploadPendingSince) }
    /// How long the backend's newest announced changes have waited to be applied (zero when none wait).
    public var downloadLag: Duration { Self.since(downloadPendingSince) }

    private static func since(_ date: Date?) -> Duration {
        date.map { .seconds(max(0, Date().timeIntervalSince($0))) } ?? .zero
    }
    /// The last full sync (every row sent again by the backend): when it was applied and why.
    public var lastFullSync: FullSync?
    /// The newest CRUD entry id the backend has applied (0 before any upload).
    public var uploadedThrough: Int64 = 0
    /// The newest CRUD entry id whose upload a download applied since (0 before any): a write
    /// checkpoint, what ``DatabaseSync/waitUntilSynced(_:timeout:)`` waits for.
    public var syncedThrough: Int64 = 0
    /// The newest CRUD entry id ever queued (0 before any write): what
    /// ``DatabaseSync/waitUntilSynced(_:timeout:)`` waits for by default.
    public var committedThrough: Int64 = 0
    /// The last verification against the server by any process (``DatabaseSync/verify(with:repair:tables:)``,
    /// or the owner's in the background); nil before the first.
    public var lastVerification: LastVerification?

    /// A full sync: the backend sent every row again (see ``SyncEvent/fullSync(reason:)``).
    public struct FullSync: Sendable, Hashable, Codable {
        /// When it was applied.
        public var at: Date
        /// The backend's reason: a first sync, a server restored from a dump, a cursor behind the compacted change log.
        public var reason: String

        public init(at: Date, reason: String) {
            self.at = at
            self.reason = reason
        }
    }

    /// A status with nothing synced yet and no owner.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case connected, uploading, downloading, backend
        case lastSyncedAt = "last_synced_at", hasSynced = "has_synced", lastFailure = "last_failure"
        case uploadPendingSince = "upload_pending_since", downloadPendingSince = "download_pending_since"
        case pendingUploads = "pending_uploads", rejectedUploads = "rejected_uploads", ownerPID = "owner_pid", epoch, lastFullSync = "last_full_sync"
        case nextRetryAt = "next_retry_at"
    }
}

extension DatabaseSync {
    /// The sync status as stored, with the live owner (checked on `<db>-owner.lock`), the epoch
    /// and the upload queue length.
    public func status() throws -> SyncStatus {
        let (json, epoch, pid, pending, downloading, rejected, lastRefusal, positions, verification) = try database.read { tx in
            (
                try tx.stored(.syncStatus).stringValue,
                try tx.stored(.epoch).int64Value ?? 0,
                try tx.stored(.ownerPID).int64Value,
                try UploadQueue.count(in: tx),
                try tx.stored(.downloading).int64Value == 1,
                try RejectedUploadRows.count(in: tx),
                try RejectedUploadRows.newest(in: tx),
                try SyncPositions.read(in: tx),
                try LastVerification.load(in: tx)
            )
        }
        var status = json.flatMap { try? SyncStatus.decoder.decode(SyncStatus.self, from: Data($0.utf8)) } ?? SyncStatus()
        (status.uploadedThrough, status.syncedThrough, status.committedThrough) = (positions.uploaded, positions.synced, positions.committed)
        status.epoch = epoch
        status.lastVerification = verification
        status.pendingUploads = pending
        if pending == 0 { status.uploadPendingSince = nil }
        status.rejectedUploads = rejected
        status.lastRefusal = lastRefusal
        status.ownerPID = FileLock.isHeld(path: database.files.ownerLock) ? pid.flatMap { Int32(exactly: $0) } : nil
        if status.ownerPID == nil { status.connected = false }
        status.uploading = status.connected && pending > 0
        status.downloading = status.ownerPID != nil && downloading
        return status
    }

    /// Yields the sync status now and whenever it changes.
    public func statusUpdates() throws -> AsyncThrowingStream<SyncStatus, Error> {
        let changes = try database.changes()
        return AsyncThrowingStream { continuation in
            let task = Task { [weak database] in
                var last: SyncStatus?
                do {
                    guard let first = try database?.sync.status() else { return continuation.finish() }
                    last = first
                    continuation.yield(first)
                    for await change in changes {
                        guard UploadQueue.isChanged(by: change) || change.rawTables.contains(InternalTables.keyValue) else { continue }
                        guard let status = try database?.sync.status() else { break }
                        if status != last { last = status; continuation.yield(status) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Waits until a download pass has completed (``SyncStatus/hasSynced``), or `timeout` has passed.
    /// - Returns: true if synced within the timeout (the status is read once more when it ends).
    public func waitForFirstSync(timeout: Duration) async throws -> Bool {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                for try await status in try self.statusUpdates() where status.hasSynced { return true }
                return false
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                // The status as it is now: under a busy cooperative pool this task may run long
                // after the status changed, before the updates' task has read it.
                return try self.status().hasSynced
            }
            let result = try await group.next() ?? false
            group.cancelAll()
            return result
        }
    }
}

extension SyncStatus {
    static let decoder: JSONDecoder = {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .iso8601
        return d
    }()

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.dateEncodingStrategy = .iso8601
        e.outputFormatting = [.sortedKeys]
        return e
    }()
}
