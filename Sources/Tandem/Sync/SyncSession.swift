import Foundation
import Synchronization

/// A process's offer to own sync for a database, from ``DatabaseSync/start(with:backendName:)``.
///
/// The session waits for ownership in the background; while this process is the owner it syncs.
/// ``stop()`` releases ownership cleanly so a stand-by takes over at once.
public final class SyncSession: Sendable {
    /// Events in order: ``SyncEvent/becameOwner(epoch:)``, uploads, downloads, errors, ``SyncEvent/stopped``.
    /// After ``SyncEvent/lostOwnership(_:)`` the process offers itself again.
    public let events: AsyncStream<SyncEvent>
    private let continuation: AsyncStream<SyncEvent>.Continuation
    let database: SharedDatabase
    let backend: any SyncBackend
    private let backendName: String
    private let lifecycle: SyncLifecycle

    init(database: SharedDatabase, backend: any SyncBackend, backendName: String) throws {
        (events, continuation) = AsyncStream<SyncEvent>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        self.database = database
        self.backend = backend
        self.backendName = backendName
        lifecycle = SyncLifecycle(retryBackoff: backend.retryBackoff)
        try offer()
    }

    /// A session let go without ``stop()`` stops without waiting: the engine's loop is asked to
    /// end, and ownership is released, and ``SyncEvent/stopped`` reported, once it has.
    deinit {
        let (action, engine, election) = lifecycle.stop()
        let continuation = self.continuation
        switch action {
        case .none:
            return
        case .stopWaiting:
            backend.interruptWaits()
            election?.release()
            continuation.yield(.stopped)
            continuation.finish()
        case .stopEngine:
            let lifecycle = self.lifecycle
            let ended: @Sendable () -> Void = {
                election?.release()
                lifecycle.send { $0.engineStopped() }
                continuation.yield(.stopped)
                continuation.finish()
            }
            if let engine { engine.requestStop(whenEnded: ended) } else { backend.interruptWaits(); ended() }
        }
    }

    /// Joins the election; when this process becomes owner, starts the sync engine.
    private func offer() throws {
        let election = try OwnerElection(database: database)
        guard lifecycle.standBy(with: election) else { return }  // stopped
        let continuation = self.continuation
        election.start(
            onOwner: { [weak self] epoch in
                guard let self else { return election.release() }
                switch lifecycle.send({ $0.becameOwner(epoch: epoch) }) {
                case .none:
                    return  // stop() came first and released ownership
                case .startEngine(let epoch):
                    continuation.yield(.becameOwner(epoch: epoch))
                }
                do {
                    let engine = try SyncEngine(
                        database: database, backend: backend, backendName: backendName, epoch: epoch,
                        lifecycle: lifecycle
                    ) { [weak self] event in
                        continuation.yield(event)
                        // Sent once the engine's loop has ended, on its thread: stepping down stops
                        // the engine (at once) and offers again from here.
                        if case .lostOwnership = event, let self { self.stepDown(election) }
                    }
                    guard lifecycle.keep(engine) else { return }  // stop() came first and released ownership
                    try engine.start()
                } catch {
                    // Never keep ownership without syncing: let a stand-by take over.
                    continuation.yield(.error(SyncFailure(kind: .other, message: "sync could not start: \(error)")))
                    self.stop()
                }
            },
            onError: { [weak self] error in
                continuation.yield(.error(SyncFailure(error, databasePath: self?.database.path ?? "")))
                self?.stop()
            })
    }

    /// After losing ownership (on the engine's thread, its loop ended): stop the engine, let
    /// the lock go, and offer again unless a stop came meanwhile.
    private func stepDown(_ election: OwnerElection) {
        lifecycle.takeEngine()?.stop()
        election.release()
        switch lifecycle.send({ $0.steppedDown() }) {
        case .none:
            return
        case .offerAgain:
            do { try offer() } catch {
                continuation.yield(.error(SyncFailure(error, databasePath: database.path)))
                stop()
            }
        }
    }

    /// Reports `event` through ``events`` (for work beside the engine, such as background verification).
    func report(_ event: SyncEvent) {
        continuation.yield(event)
    }

    /// True once the session stopped (or is stopping).
    var hasStopped: Bool { lifecycle.hasStopped }

    /// The current epoch when this process owns sync, else nil.
    public var epoch: Int64? { lifecycle.election?.epoch }

    /// Stops syncing and releases ownership. Blocks until the sync loop's last write finished.
    public func stop() {
        let (action, engine, election) = lifecycle.stop()
        switch action {
        case .none:
            return
        case .stopWaiting:
            backend.interruptWaits()
            election?.release()
        case .stopEngine:
            if let engine { engine.stop() } else { backend.interruptWaits() }
            election?.release()
            lifecycle.send { $0.engineStopped() }
        }
        continuation.yield(.stopped)
        continuation.finish()
    }
}

/// A session's ``SyncStateMachine`` and the election and engine it drives, under one lock,
/// shared by the session and its engine's loop.
final class SyncLifecycle: Sendable {
    private struct Held {
        var machine = SyncStateMachine()
        var election: OwnerElection?
        var engine: SyncEngine?
    }

    private let held: Mutex<Held>

    init(retryBackoff: RetryBackoff = .standard) {
        var held = Held()
        held.machine.retryBackoff = retryBackoff
        self.held = Mutex(held)
    }

    /// True once the machine is stopping or stopped.
    var hasStopped: Bool {
        held.withLock { h in
            switch h.machine.phase {
            case .stopped, .stopping: return true
            default: return false
            }
        }
    }

    /// Sends one event to the machine; its action.
    func send<Action>(_ event: (inout SyncStateMachine) -> Action) -> Action {
        held.withLock { event(&$0.machine) }
    }

    /// Keeps `election` while standing by; false once stopped (then nothing is kept).
    func standBy(with election: OwnerElection) -> Bool {
        held.withLock { h in
            switch h.machine.phase {
            case .standingBy:
                h.election = election
                return true
            case .stopped, .stopping:
                return false
            case .idle, .syncing, .backingOff, .steppingDown:
                preconditionFailure("internal inconsistency: an offer to own sync while \(h.machine.phase)")
            }
        }
    }

    /// Keeps the engine made for the ownership just taken; false when a stop came first.
    func keep(_ engine: SyncEngine) -> Bool {
        held.withLock { h in
            guard h.machine.phase == .idle else { return false }
            h.engine = engine
            return true
        }
    }

    /// The engine, no longer kept (a step-down stops it).
    func takeEngine() -> SyncEngine? {
        held.withLock { h in
            defer { h.engine = nil }
            return h.engine
        }
    }

    var election: OwnerElection? { held.withLock { $0.election } }

    /// Sends ``SyncStateMachine/stopRequested()``; its action with the engine and election to
    /// stop, which are no longer kept.
    func stop() -> (SyncStateMachine.StopAction, SyncEngine?, OwnerElection?) {
        held.withLock { h in
            let action = h.machine.stopRequested()
            defer { if action != .none { h.engine = nil; h.election = nil } }
            return (action, h.engine, h.election)
        }
    }
}

extension DatabaseSync {
    /// Offers this process as the sync owner for the database.
    ///
    /// Exactly one process per database file owns sync at a time (an exclusive `flock` on
    /// `<db>-owner.lock`). When this process becomes owner it increments the epoch and then
    /// uploads the upload queue as soon as it changes and applies the backend's changes, retrying
    /// failures with capped backoff. Other processes keep reading and writing locally.
    ///
    /// ```swift
    /// let session = try db.sync.start(with: try openBackend(url: "sqlite:/srv/tandem/server.db"))
    /// for await event in session.events { print(event) }
    /// ```
    /// - Throws: when the owner lock file cannot be opened.
    public func start(with backend: any SyncBackend, backendName: String = "") throws -> SyncSession {
        guard database.writer != nil else { throw TandemError.readOnly(path: database.path) }
        try database.bind(to: backend, name: backendName)
        return try SyncSession(database: database, backend: backend, backendName: backendName)
    }

    /// Runs one upload-then-download pass if no other process owns sync, then releases ownership.
    /// - Returns: (transactions uploaded, CRUD entries uploaded, changes downloaded).
    /// - Throws: ``TandemError/notOwner(path:ownerPID:)`` when another process owns sync; backend errors.
    public func once(with backend: any SyncBackend, backendName: String = "") throws -> (transactions: Int, entries: Int, downloaded: Int) {
        guard database.writer != nil else { throw TandemError.readOnly(path: database.path) }
        try database.bind(to: backend, name: backendName)
        var attempts = OneShotSyncStateMachine()
        while true {
            do {
                let result = try database.syncPassOnce(with: backend, backendName: backendName)
                attempts.attemptSucceeded()
                return result
            } catch {
                let staleEpoch = if case TandemError.staleEpoch = error { true } else { false }
                switch attempts.attemptFailed(staleEpoch: staleEpoch) {
                case .tryAgain: continue
                case .fail: throw error
                }
            }
        }
    }
}

extension SharedDatabase {
    /// One pass of ``DatabaseSync/once(with:backendName:)`` as the owner, if no other process is.
    fileprivate func syncPassOnce(with backend: any SyncBackend, backendName: String) throws -> (transactions: Int, entries: Int, downloaded: Int) {
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
            if failure.kind != .refusedEpoch {
                try? writeStatus(epoch: epoch) {
                    $0.lastFailure = failure; $0.backend = backendName.isEmpty ? $0.backend : backendName
                }
            }
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
        var status = try sync.status()
        change(&status)
        let json = String(decoding: try SyncStatus.encoder.encode(status), as: UTF8.self)
        try write { tx in
            try Fence.check(tx, epoch: epoch)
            try tx.store(.syncStatus, json)
        }
    }
}
