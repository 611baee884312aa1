import Foundation
import Synchronization

/// A process's offer to own sync for a database, from ``SharedDatabase/sync(with:backendName:)``.
///
/// The session waits for ownership in the background; while this process is the owner it syncs.
/// ``stop()`` releases ownership cleanly so a stand-by takes over at once.
public final class SyncSession: Sendable {
    private struct State {
        var engine: SyncEngine?
        var election: OwnerElection?
        var stopped = false
    }

    /// Events in order: ``SyncEvent/becameOwner(epoch:)``, uploads, downloads, errors, ``SyncEvent/stopped``.
    /// After ``SyncEvent/lostOwnership(_:)`` the process offers itself again.
    public let events: AsyncStream<SyncEvent>
    private let continuation: AsyncStream<SyncEvent>.Continuation
    private let database: SharedDatabase
    private let backend: any SyncBackend
    private let backendName: String
    private let state = Mutex(State())

    init(database: SharedDatabase, backend: any SyncBackend, backendName: String) throws {
        (events, continuation) = AsyncStream<SyncEvent>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        self.database = database
        self.backend = backend
        self.backendName = backendName
        try offer()
    }

    deinit { stop() }

    /// Joins the election; when this process becomes owner, starts the sync engine.
    private func offer() throws {
        let election = try OwnerElection(database: database)
        let proceed = state.withLock { s -> Bool in
            guard !s.stopped else { return false }
            s.election = election
            return true
        }
        guard proceed else { return }
        let continuation = self.continuation
        election.start(onOwner: { [weak self] epoch in
            guard let self else { return election.release() }
            continuation.yield(.becameOwner(epoch: epoch))
            do {
                let engine = try SyncEngine(database: database, backend: backend, backendName: backendName, epoch: epoch) { [weak self] event in
                    continuation.yield(event)
                    if case .lostOwnership = event, let self {
                        // The engine's loop has ended; step down from another thread (stopping waits for that loop).
                        DispatchQueue.global().async { self.stepDown(election) }
                    }
                }
                let started = state.withLock { s -> Bool in
                    guard !s.stopped else { return false }
                    s.engine = engine
                    return true
                }
                guard started else { return }  // stop() came first and released ownership
                try engine.start()
            } catch {
                // Never keep ownership without syncing: let a stand-by take over.
                continuation.yield(.error(SyncFailure(kind: .other, message: "sync could not start: \(error)")))
                self.stop()
            }
        }, onError: { [weak self] error in
            continuation.yield(.error(SyncFailure(error, databasePath: self?.database.path ?? "")))
            self?.stop()
        })
    }

    /// After losing ownership: stop the engine, let the lock go, and offer again.
    private func stepDown(_ election: OwnerElection) {
        let engine = state.withLock { s -> SyncEngine? in
            defer { s.engine = nil }
            return s.engine
        }
        engine?.stop()
        election.release()
        do { try offer() } catch {
            continuation.yield(.error(SyncFailure(error, databasePath: database.path)))
            stop()
        }
    }

    /// The current epoch when this process owns sync, else nil.
    public var epoch: Int64? { state.withLock { $0.election }?.epoch }

    /// Stops syncing and releases ownership. Blocks until the sync loop's last write finished.
    public func stop() {
        let (engine, election, first) = state.withLock { s -> (SyncEngine?, OwnerElection?, Bool) in
            defer { s.stopped = true; s.engine = nil; s.election = nil }
            return (s.engine, s.election, !s.stopped)
        }
        guard first else { return }
        engine?.stop()
        if engine == nil { backend.interruptWaits() }
        election?.release()
        continuation.yield(.stopped)
        continuation.finish()
    }
}

extension SharedDatabase {
    /// Offers this process as the sync owner for the database.
    ///
    /// Exactly one process per database file owns sync at a time (an exclusive `flock` on
    /// `<db>-owner.lock`). When this process becomes owner it increments the epoch and then
    /// uploads the upload queue as soon as it changes and applies the backend's changes, retrying
    /// failures with capped backoff. Other processes keep reading and writing locally.
    ///
    /// ```swift
    /// let session = try db.sync(with: try openBackend(url: "sqlite:/srv/tandem/server.db"))
    /// for await event in session.events { print(event) }
    /// ```
    /// - Throws: when the owner lock file cannot be opened.
    public func sync(with backend: any SyncBackend, backendName: String = "") throws -> SyncSession {
        guard writer != nil else { throw TandemError.readOnly(path: path) }
        try bind(to: backend, name: backendName)
        return try SyncSession(database: self, backend: backend, backendName: backendName)
    }

    /// Runs one upload-then-download pass if no other process owns sync, then releases ownership.
    /// - Returns: (transactions uploaded, CRUD entries uploaded, changes downloaded).
    /// - Throws: ``TandemError/notOwner(path:ownerPID:)`` when another process owns sync; backend errors.
    public func syncOnce(with backend: any SyncBackend, backendName: String = "") throws -> (transactions: Int, entries: Int, downloaded: Int) {
        guard writer != nil else { throw TandemError.readOnly(path: path) }
        try bind(to: backend, name: backendName)
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try syncPassOnce(with: backend, backendName: backendName)
            } catch TandemError.staleEpoch where attempt == 1 {
                // The backend had seen a newer epoch (a restored file): the pass raised the local
                // epoch to it, so a second election starts above it.
                continue
            }
        }
    }

    private func syncPassOnce(with backend: any SyncBackend, backendName: String) throws -> (transactions: Int, entries: Int, downloaded: Int) {
        let election = try OwnerElection(database: self)
        guard let epoch = try election.tryAcquire() else {
            let pid = try? read { try $0.stored(.ownerPID).int64Value }
            throw TandemError.notOwner(path: path, ownerPID: pid.flatMap { $0 }.flatMap { Int32(exactly: $0) })
        }
        defer { election.release() }
        let pass = SyncPass(database: self, backend: backend, epoch: epoch, clientID: try clientID())
        let result: SyncPass.Result
        do {
            result = try pass.run()
        } catch {
            let failure = SyncFailure(error, databasePath: path)
            if failure.kind != .refusedEpoch { try? writeStatus(epoch: epoch) { $0.lastFailure = failure; $0.backend = backendName.isEmpty ? $0.backend : backendName } }
            throw error
        }
        try writeStatus(epoch: epoch) { status in
            status.lastSyncedAt = Date()
            status.hasSynced = true
            status.lastFailure = nil
            if !backendName.isEmpty { status.backend = backendName }
            if let reason = result.fullSyncReason { status.lastFullSync = .init(at: Date(), reason: reason) }
        }
        return (result.transactions, result.entries, result.downloaded)
    }

    /// Records a failure to reach the backend in the status, as the owner (briefly) when no
    /// other process owns sync; the owner's own status is left alone.
    func recordFailureAsOwner(_ error: any Error, backendName: String) throws {
        let election = try OwnerElection(database: self)
        guard let epoch = try election.tryAcquire() else { return }
        defer { election.release() }
        try writeStatus(epoch: epoch) { status in
            status.lastFailure = SyncFailure(error, databasePath: path)
            status.backend = backendName
        }
    }

    /// Changes the stored status under the owner's `epoch` (fenced like every sync write).
    private func writeStatus(epoch: Int64, _ change: (inout SyncStatus) -> Void) throws {
        var status = try syncStatus()
        change(&status)
        let json = String(decoding: try SyncStatus.encoder.encode(status), as: UTF8.self)
        try write { tx in
            try Fence.check(tx, epoch: epoch)
            try tx.store(.syncStatus, json)
        }
    }
}
