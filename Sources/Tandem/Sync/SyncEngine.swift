import Foundation
import Synchronization

/// The owner's sync loop: runs a ``SyncPass`` on start, whenever `ps_crud` changes (any
/// process), when the backend announces changes, and after failures with capped backoff.
final class SyncEngine: Sendable {
    private struct State {
        var stopped = false
        var status = SyncStatus()
        var lastStatusWrite: Date = .distantPast
        var changeToken: AnyDatabaseCancellable?
        var started = false
        /// The loop thread, whose own commits (sealing, completing uploads, applying downloads,
        /// status) queue nothing and so need no further pass.
        var loopThread: pthread_t?
    }

    private let database: SharedDatabase
    private let backend: any SyncBackend
    private let backendName: String
    private let epoch: Int64
    private let clientID: String
    private let signal = WakeFlag()
    /// Raised by ``stop()``: ends the backend waiter's retry delay.
    private let backendRetry = WakeFlag()
    private let finished = DispatchSemaphore(value: 0)
    private let state = Mutex(State())
    private let onEvent: @Sendable (SyncEvent) -> Void
    /// The rows with queued entries, kept from pass to pass (``PendingRows``).
    private let pendingRows = PendingRows()
    /// When the waiting entries and changes were first seen, and a backlog's progress.
    private let lag = SyncLagTracker()

    init(database: SharedDatabase, backend: any SyncBackend, backendName: String, epoch: Int64,
         onEvent: @escaping @Sendable (SyncEvent) -> Void) throws {
        self.database = database
        self.backend = backend
        self.backendName = backendName
        self.epoch = epoch
        self.clientID = try database.clientID()
        self.onEvent = onEvent
        var status = (try? database.syncStatus()) ?? SyncStatus()
        status.backend = backendName
        state.withLock { $0.status = status }
    }

    func start() throws {
        let token = try database.addChangeHandler { [signal, weak self] change in
            guard change.isUnknown || change.rawTables.contains(InternalTables.crud) else { return }
            // A pass's own writes (this process's commits on the loop thread) queue nothing;
            // waking for them ran one more pass after every upload.
            if let loop = self?.state.withLock({ $0.loopThread }), pthread_equal(loop, pthread_self()) != 0 { return }
            signal.raise()
        }
        state.withLock { $0.changeToken = token; $0.started = true }
        if let notice = database.changePollingNotice { onEvent(.pollingForChanges(notice)) }
        spawn("tandem.sync") { [self] in loop() }
        spawn("tandem.sync-wait") { [self] in waitForBackend() }
    }

    /// Stops the loop and waits for its last write to finish.
    func stop() {
        let (token, started) = state.withLock { s -> (AnyDatabaseCancellable?, Bool) in
            s.stopped = true
            return (s.changeToken, s.started)
        }
        token?.cancel()
        signal.raise()
        backendRetry.raise()
        backend.interruptWaits()
        if started { finished.wait() }
    }

    private var stopped: Bool { state.withLock { $0.stopped } }

    private func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// The I/O loop that drives ``SyncStateMachine``: it performs each action and feeds the
    /// outcome back as the next event.
    private func loop() {
        defer { finished.signal() }
        state.withLock { $0.loopThread = pthread_self() }
        var machine = SyncStateMachine()
        var action = machine.handle(.start)
        while true {
            switch action {
            case .runPass:
                action = machine.handle(runPass())
            case .waitForWakeUp:
                signal.wait()
                action = machine.handle(stopped ? .stopRequested : .woken)
            case .backOff(let seconds, let failure):
                report(failure)
                // Sleep out the backoff; local writes do not cut it short, a stop does.
                let deadline = Date(timeIntervalSinceNow: seconds)
                while !stopped, Date() < deadline { _ = signal.wait(timeout: deadline.timeIntervalSinceNow) }
                action = machine.handle(stopped ? .stopRequested : .backoffElapsed)
            case .stepDown(let reason):
                onEvent(.lostOwnership(reason))
                return
            case .finish, .none:
                return
            }
            if stopped, action != .finish { action = machine.handle(.stopRequested) }
        }
    }

    /// How long one pass uploads before it downloads (seconds; see ``SyncPass/uploadTimeLimit``).
    static let uploadTimeLimit = 0.2

    /// One pass and its bookkeeping, as the event it ends with.
    private func runPass() -> SyncStateMachine.Event {
        let started = Date()
        let (head, last) = (try? database.read { tx in (try UploadQueueRows.firstID(in: tx), try UploadQueueRows.lastID(in: tx)) }) ?? (nil, nil)
        if let last { lag.queued(through: last, at: started) }
        do {
            var pass = SyncPass(database: database, backend: backend, epoch: epoch, clientID: clientID, onEvent: onEvent)
            pass.pendingRows = pendingRows
            pass.uploadTimeLimit = SyncEngine.uploadTimeLimit
            let result = try pass.run()
            let newHead = result.entries > 0 || result.setAside > 0 ? try database.read { try UploadQueueRows.firstID(in: $0) } : head
            let lags = (upload: lag.pendingSince(head: newHead), download: lag.downloadPending(appliedFrom: started))
            if let progress = try lag.passed(began: started, uploaded: result.entries, downloaded: result.downloaded, pending: { try database.uploadQueue.pendingCount() },
                                             busy: result.moreToUpload, interval: database.configuration.syncProgressInterval.seconds) {
                onEvent(.progress(progress))
            }
            try recordSuccess(fullSync: result.fullSyncReason, lags: lags)
            checkpointIfLarge()
            return .passSucceeded(moreToUpload: result.moreToUpload)
        } catch {
            // Entries wait while the backend cannot take them: the status says since when.
            let since = lag.pendingSince(head: head)
            state.withLock { $0.status.uploadPendingSince = since }
            let failure = SyncFailure(error, databasePath: database.path)
            return failure.kind == .refusedEpoch ? .staleEpoch(failure.message) : .passFailed(failure)
        }
    }

    /// The owner keeps the WAL bounded: readers are short, so a TRUNCATE checkpoint usually
    /// succeeds at once; when a reader pins the WAL it waits at most 100 ms and tries again later.
    private func checkpointIfLarge() {
        guard database.walSize() > database.configuration.walCheckpointThreshold else { return }
        _ = try? database.checkpoint(.truncate)
    }

    /// Reports a failed pass: an event, and the status every process reads.
    private func report(_ failure: SyncFailure) {
        onEvent(.error(failure))
        let changed = state.withLock { s -> Bool in
            let changed = s.status.lastFailure != failure || s.status.connected || Date().timeIntervalSince(s.lastStatusWrite) > 1
            s.status.lastFailure = failure
            s.status.connected = false
            return changed
        }
        if changed { try? writeStatus() }
    }

    private func recordSuccess(fullSync: String?, lags: (upload: Date?, download: Date?)) throws {
        let now = Date()
        let needsWrite = state.withLock { s -> Bool in
            let changed = !s.status.connected || s.status.lastFailure != nil || !s.status.hasSynced || fullSync != nil
                || (s.status.uploadPendingSince == nil) != (lags.upload == nil) || (s.status.downloadPendingSince == nil) != (lags.download == nil)
                || now.timeIntervalSince(s.lastStatusWrite) > 1
            s.status.uploadPendingSince = lags.upload
            s.status.downloadPendingSince = lags.download
            if let fullSync { s.status.lastFullSync = .init(at: now, reason: fullSync) }
            s.status.connected = true
            s.status.lastFailure = nil
            s.status.hasSynced = true
            s.status.lastSyncedAt = now
            return changed
        }
        if needsWrite { try writeStatus() }
    }

    private func writeStatus() throws {
        let status = state.withLock { s -> SyncStatus in
            s.lastStatusWrite = Date()
            return s.status
        }
        let json = String(decoding: try SyncStatus.encoder.encode(status), as: UTF8.self)
        try database.write { tx in
            try Fence.check(tx, epoch: epoch)
            try tx.store(.syncStatus, json)
        }
    }

    /// Blocks in the backend's push/long-poll wait and raises the signal on news. Each wait
    /// starts after the newest change already announced, so one change wakes the loop once.
    private func waitForBackend() {
        var known: String?
        var backoff = Backoff()
        while !stopped {
            do {
                if known == nil {
                    known = try database.read { try $0.stored(.cursor).stringValue } ?? ""
                }
                if let newest = try backend.waitForChanges(after: known ?? "", timeout: .seconds(10)) {
                    known = newest
                    lag.announced()
                    signal.raise()
                }
                backoff.reset()
            } catch {
                known = nil
                // The pass loop reports the failure; this waits with the same capped backoff,
                // ended early by a stop (which also ends any wait in the backend).
                backendRetry.wait(timeout: backoff.next())
            }
        }
    }
}
