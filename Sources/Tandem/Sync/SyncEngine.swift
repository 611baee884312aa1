import Foundation
import Synchronization

/// The owner's sync loop: runs a ``SyncPass`` on start, whenever `ps_crud` changes (any
/// process), when the backend announces changes, and after failures with capped backoff. Every
/// decision is the session's ``SyncStateMachine``'s (through ``SyncLifecycle``): the loop sends
/// it each outcome and performs the action it returns.
final class SyncEngine: Sendable {
    private struct State {
        var stopped = false
        var changeToken: AnyDatabaseCancellable?
        /// Whether the loop was started, and whether it has ended.
        var loopStarted = false, loopEnded = false
        /// Called once the loop has ended (``requestStop(whenEnded:)``).
        var whenEnded: (@Sendable () -> Void)?
        /// When passes download (``PassSchedule``).
        var schedule: PassSchedule
    }

    private let database: SharedDatabase
    private let backend: any SyncBackend
    private let epoch: Int64
    private let clientID: String
    /// The status as stored when this owner began, with its backend's name.
    private let initialStatus: SyncStatus
    private let lifecycle: SyncLifecycle
    private let signal = WakeFlag()
    /// Raised by ``stop()``: ends the backend waiter's retry delay.
    private let backendRetry = WakeFlag()
    /// Raised when the first pass has ended, and by ``stop()`` (``waitForBackend()``).
    private let firstPassEnded = WakeFlag()
    /// Entered by ``start()`` for the loop, left when the loop has ended: ``stop()`` waits for it.
    private let loopRunning = DispatchGroup()
    private let state: Mutex<State>
    private let onEvent: @Sendable (SyncEvent) -> Void
    /// The rows with queued entries, kept from pass to pass (``PendingRows``).
    private let pendingRows = PendingRows()
    /// When the waiting entries and changes were first seen, and a backlog's progress.
    private let lag = SyncLagTracker()
    /// Where each pass completes and reads upload batches beside the backend's work
    /// (``SyncPass/Carried/localWork``).
    private let localWork = DispatchQueue(label: "tandem.upload-queue")
    /// Bound while the loop runs: its own commits (sealing, completing uploads, applying
    /// downloads, status), wherever they run, queue nothing and so need no further pass.
    private let ownCommits = CommitTag()

    /// - Parameter onEvent: called on the loop's thread; ``SyncEvent/lostOwnership(_:)`` comes
    ///   after the loop has ended, so that the session may stop this engine from that call.
    init(
        database: SharedDatabase, backend: any SyncBackend, backendName: String, epoch: Int64, lifecycle: SyncLifecycle,
        onEvent: @escaping @Sendable (SyncEvent) -> Void
    ) throws {
        self.database = database
        self.backend = backend
        self.epoch = epoch
        self.lifecycle = lifecycle
        self.clientID = try database.clientID()
        self.onEvent = onEvent
        let neverSynced = try database.read { try $0.stored(.cursor).stringValue ?? "" }.isEmpty
        state = Mutex(State(schedule: PassSchedule(neverSynced: neverSynced)))
        var status = (try? database.sync.status()) ?? SyncStatus()
        status.backend = backendName
        initialStatus = status
    }

    func start() throws {
        // Another process's commit wakes the loop at its wake-up, before the observer has read
        // what it changed: a pass reads the queue anyway (one that finds nothing costs a read).
        let observer = database.observer
        let wakeUps = try observer.subscribeToWakeUps { [signal] in signal.raise() }
        // This process's commits, told on the committing thread with their tag, those only the
        // backstop poll notices, and unknown ones (``raisesTheLoop(_:origin:ownCommits:)``).
        let changes = try observer.subscribe { [signal, ownCommits] change, origin in
            if Self.raisesTheLoop(change, origin: origin, ownCommits: ownCommits) { signal.raise() }
        }
        let token = AnyDatabaseCancellable {
            observer.unsubscribe(wakeUps)
            observer.unsubscribe(changes)
        }
        state.withLock { $0.changeToken = token }
        if let notice = database.changePollingNotice { onEvent(.pollingForChanges(notice)) }
        loopRunning.enter()
        state.withLock { $0.loopStarted = true }
        spawn("tandem.sync") { [self] in ownCommits.bound { runLoop() } }
        spawn("tandem.sync-wait") { [self] in waitForBackend() }
    }

    /// Whether a change the observer tells (see ``start()``) raises the loop: one of the upload
    /// queue's, not made by the loop's own passes (which queue nothing: waking for them ran one
    /// more pass after every upload), and not read after a wake-up that raised it already,
    /// unless its tables are unknown (a writer that wakes no one may have queued entries after
    /// the pass that wake-up began had read the queue).
    static func raisesTheLoop(_ change: DatabaseChange, origin: ChangeObserver.Origin, ownCommits: CommitTag) -> Bool {
        guard UploadQueue.isChanged(by: change), change.tag != ownCommits else { return false }
        return origin != .wakeUp || change.isUnknown
    }

    /// Stops the loop and waits for it to end (its last write finished); at once when it never
    /// started or has ended. Safe to call more than once, and from the loop's own thread once
    /// it has ended (from ``SyncEvent/lostOwnership(_:)``).
    func stop() {
        requestStop()
        loopRunning.wait()
    }

    /// Asks the loop to end without waiting for it; `whenEnded` runs once it has (at once, here,
    /// when it never started or has ended; else on the loop's thread).
    func requestStop(whenEnded: (@Sendable () -> Void)? = nil) {
        let (token, runNow) = state.withLock { s -> (AnyDatabaseCancellable?, Bool) in
            s.stopped = true
            defer { s.changeToken = nil }
            let ended = !s.loopStarted || s.loopEnded
            if !ended, let whenEnded { s.whenEnded = whenEnded }
            return (s.changeToken, ended)
        }
        token?.cancel()
        signal.raise()
        backendRetry.raise()
        firstPassEnded.raise()
        backend.interruptWaits()
        if runNow { whenEnded?() }
    }

    private var stopped: Bool { state.withLock { $0.stopped } }

    private func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// The loop's thread: the loop, then the end of ownership when the epoch moved on.
    private func runLoop() {
        let steppedDown = loop()
        let whenEnded = state.withLock { s -> (@Sendable () -> Void)? in
            s.loopEnded = true
            defer { s.whenEnded = nil }
            return s.whenEnded
        }
        loopRunning.leave()
        whenEnded?()
        if let steppedDown { onEvent(.lostOwnership(steppedDown)) }
    }

    /// What the loop does next, from the action the machine returned.
    private enum Next {
        case runPass, waitForWakeUp(timeout: Double?), backOff(seconds: Double), finish, stepDown(reason: String)
        /// Stopping while the last pass left its own uploads' answers for later: they are
        /// downloaded first, so that the owner stops with its rows as the server holds them.
        case downloadThenFinish
    }

    /// The I/O loop that drives ``SyncStateMachine``: it performs each action and sends the
    /// outcome back as the next event. Returns the reason when ownership was lost.
    private func loop() -> String? {
        var next: Next
        switch lifecycle.send({ $0.start(status: initialStatus) }) {
        case .runPass: next = .runPass
        case .finish: next = .finish
        }
        while true {
            switch next {
            case .runPass:
                next = runPass()
                firstPassEnded.raise()
            case .waitForWakeUp(let timeout):
                // Woken, or the time the last pass left its own uploads' answers for is up.
                if let timeout { signal.wait(timeout: .seconds(timeout)) } else { signal.wait() }
                switch lifecycle.send({ $0.woken() }) {
                case .runPass: next = .runPass
                case .none: next = .waitForWakeUp(timeout: nil)
                case .finish: next = timeout != nil ? .downloadThenFinish : .finish
                }
            case .backOff(let seconds):
                // Sleep out the backoff; local writes do not cut it short, a stop does.
                let deadline = ContinuousClock.now + .seconds(seconds)
                while !stopped, ContinuousClock.now < deadline { signal.wait(timeout: ContinuousClock.now.duration(to: deadline)) }
                switch lifecycle.send({ $0.backoffElapsed() }) {
                case .runPass: next = .runPass
                case .finish: next = .finish
                }
            case .downloadThenFinish:
                _ = runPass(downloading: true)
                return nil
            case .stepDown(let reason):
                return reason
            case .finish:
                return nil
            }
        }
    }

    /// How long one pass uploads before it downloads (see ``SyncPass/uploadTimeLimit``).
    static let uploadTimeLimit = Duration.milliseconds(200)

    /// One pass and its bookkeeping, sent to the machine; what the loop does next.
    /// - Parameter downloading: the pass downloads, whatever its ``PassSchedule`` says.
    private func runPass(downloading: Bool = false) -> Next {
        let (started, wallStarted) = (ContinuousClock.now, Date())
        let queue = try? database.uploadQueue.bounds()
        let (head, last) = queue ?? (nil, nil)
        if let last { lag.queued(through: last, at: started) }
        let moreToUpload: Bool
        var answersDueIn: Duration?
        do {
            // The queue was read above: the pass need not read it again.
            let carried = SyncPass.Carried(pendingRows: pendingRows, localWork: localWork, queueAtStart: queue.map { _ in SyncPass.QueueAtStart(lastID: last) })
            let pass = SyncPass(
                database: database, backend: backend, epoch: epoch, clientID: clientID, uploadTimeLimit: SyncEngine.uploadTimeLimit, onEvent: onEvent,
                carried: carried)
            state.withLock { $0.schedule.passBegan(at: started, lastQueued: last) }
            var result = try pass.uploads()
            let uploaded = result.entries > 0
            if try downloading || downloadsNow(moreQueued: result.moreToUpload, uploaded: uploaded) { try pass.downloads(after: &result) }
            let downloadPending: ContinuousClock.Instant?
            (answersDueIn, downloadPending) = state.withLock {
                let due = $0.schedule.passEnded(
                    at: .now, pass: .init(downloadBegan: result.downloadBegan, moreToUpload: result.moreToUpload, uploaded: uploaded))
                return (due, $0.schedule.downloadPendingSince)
            }
            let newHead = result.entries > 0 || result.setAside > 0 ? try database.uploadQueue.head() : head
            let now = ContinuousClock.now, wallNow = Date()
            let wall = { (instant: ContinuousClock.Instant?) in instant.map { wallNow.addingTimeInterval(now.duration(to: $0).seconds) } }
            let lags = (upload: wall(lag.pendingSince(head: newHead)), download: wall(downloadPending))
            if let progress = try lag.passed(
                began: started, uploaded: result.entries, downloaded: result.downloaded, pending: { try database.uploadQueue.pendingCount() },
                busy: result.moreToUpload, interval: database.configuration.syncProgressInterval, at: now)
            {
                onEvent(.progress(progress))
            }
            if let status = lifecycle.send({ $0.passRecorded(fullSync: result.fullSyncReason, lags: lags, now: wallNow) }) {
                try writeStatus(status)
            }
            checkpointIfLarge()
            moreToUpload = result.moreToUpload
        } catch {
            state.withLock { $0.schedule.passFailed() }
            let failure = SyncFailure(error, databasePath: database.path)
            if failure.kind == .refusedEpoch {
                switch lifecycle.send({ $0.staleEpoch(failure.message) }) {
                case .stepDown(let reason): return .stepDown(reason: reason)
                case .finish: return .finish
                }
            }
            // Entries wait while the backend cannot take them: the status says since when.
            let since = lag.pendingSince(head: head).map { wallStarted.addingTimeInterval(started.duration(to: $0).seconds) }
            switch lifecycle.send({ $0.passFailed(failure, uploadPendingSince: since, now: Date()) }) {
            case .backOff(let seconds, let failure, let status):
                onEvent(.error(failure))
                if let status { try? writeStatus(status) }
                return .backOff(seconds: seconds)
            case .finish:
                return .finish
            }
        }
        switch lifecycle.send({ $0.passSucceeded(moreToUpload: moreToUpload, answersDueIn: answersDueIn?.seconds) }) {
        case .runPass: return .runPass
        case .waitForWakeUp(let timeout): return .waitForWakeUp(timeout: timeout)
        case .finish: return !downloading && answersDueIn != nil ? .downloadThenFinish : .finish
        }
    }

    /// Whether the pass under way downloads after its uploads (``PassSchedule/afterUploads(at:moreQueued:uploaded:)``),
    /// reading the queue's head only when the schedule asks.
    private func downloadsNow(moreQueued: Bool, uploaded: Bool) throws -> Bool {
        try state.withLock { $0.schedule.afterUploads(at: .now, moreQueued: moreQueued, uploaded: uploaded) }.downloads {
            try database.uploadQueue.head()
        }
    }

    /// The owner keeps the WAL bounded: readers are short, so a TRUNCATE checkpoint usually
    /// succeeds at once; when a reader pins the WAL it waits at most 100 ms and tries again later.
    private func checkpointIfLarge() {
        guard database.walSize() > database.configuration.walCheckpointThreshold else { return }
        _ = try? database.checkpoint(.truncate)
    }

    /// Writes the status the machine recorded, fenced by this owner's epoch.
    private func writeStatus(_ status: SyncStatus) throws {
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
                    let now = ContinuousClock.now
                    if known == "" {
                        state.withLock { $0.schedule.firstSyncAnswered(at: now) }
                        // A cursorless wait answers at once: a first sync is due, which the first
                        // pass does. This waits for that pass (under way, or ended already) and
                        // then from the cursor it stored (which answers at once when anything
                        // came after its download): a second pass would find nothing. Only when
                        // the pass left its download for later (a backlog) is this answer the news.
                        if !state.withLock({ $0.schedule.passHasEnded }) { firstPassEnded.wait() }
                        if let stored = try database.read({ try $0.stored(.cursor).stringValue }), !stored.isEmpty {
                            known = stored
                            continue
                        }
                    }
                    known = newest
                    state.withLock { $0.schedule.announced(at: now) }
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
