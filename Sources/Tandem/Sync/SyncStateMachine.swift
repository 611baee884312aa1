import Foundation

/// A sync session's lifecycle as a pure state machine: a stand-by that becomes owner, the
/// owner's loop of passes (idle, syncing, backing off), its status writes, stepping down when
/// the epoch moved on and offering again, and stopping. No files, threads or clocks here: each
/// event is one `mutating func` taking what the caller observed (times included) and returning
/// that event's own action for the caller (``SyncSession``, ``SyncEngine``) to perform. Every
/// switch names every state; an event that cannot happen in a state traps with "internal
/// inconsistency".
///
/// ```text
///                becameOwner                 start / woken            passSucceeded(more: false)
///   standingBy ─────────────▶ idle(owner) ───────────────▶ syncing ──────────────────────────▶ idle
///        ▲                                                  │   ▲  passSucceeded(more: true): again
///        │ steppedDown (offer again)     passFailed(error)  │   │  backoffElapsed
///        │                                                  ▼   │
///   steppingDown ◀──── staleEpoch (any owner state) ──── backingOff
///
///   standingBy, steppingDown ── stopRequested ──▶ stopped
///   owner states ── stopRequested ──▶ stopping(owner) ── engineStopped ──▶ stopped
/// ```
struct SyncStateMachine: Sendable {
    /// Where the session is, with the data it needs there.
    enum State: Sendable {
        /// Offered: waiting for the owner lock (``OwnerElection``).
        case standingBy
        /// Owner, waiting for a wake-up (a local commit to the upload queue, news from the
        /// backend); also the owner before its loop's first pass.
        case idle(Owner)
        /// Owner, a pass running.
        case syncing(Owner)
        /// Owner, a pass failed: the next runs when the delay has passed (wake-ups do not cut it short).
        case backingOff(Owner)
        /// Stop requested while owner: the loop ends at its next event (after the status write
        /// of a pass that was running), then the engine is stopped.
        case stopping(Owner)
        /// The epoch moved on: the loop ended; ownership is released, then offered again.
        case steppingDown(reason: String)
        /// Stopped; ownership, if held, released. Final.
        case stopped
    }

    /// What the owner keeps from pass to pass.
    struct Owner: Equatable, Sendable {
        var epoch: Int64
        var backoff = Backoff()
        /// The status as this owner last recorded it (written to the database when it changes,
        /// and at least every ``statusRefreshInterval`` while passes run or fail).
        var status = SyncStatus()
        /// When the status was last written (nil: not yet).
        var lastStatusWrite: Date?
    }

    /// Seconds after which a status that did not change is written again (its times move on).
    static let statusRefreshInterval: Double = 1

    /// The state now (what the session and the engine may ask of it: ``phase``, ``epoch``).
    private(set) var current: State = .standingBy

    /// The backoff after failed passes, fresh for each new owner (the backend's ``SyncBackend/retryBackoff``).
    var retryBackoff = RetryBackoff.standard

    /// A stand-by, before any event.
    init() {}

    /// The state's name, without its data.
    enum Phase: Equatable, Sendable { case standingBy, idle, syncing, backingOff, stopping, steppingDown, stopped }

    var phase: Phase {
        switch current {
        case .standingBy: return .standingBy
        case .idle: return .idle
        case .syncing: return .syncing
        case .backingOff: return .backingOff
        case .stopping: return .stopping
        case .steppingDown: return .steppingDown
        case .stopped: return .stopped
        }
    }

    /// The epoch while owner (stopping included), else nil.
    var epoch: Int64? {
        switch current {
        case .idle(let owner), .syncing(let owner), .backingOff(let owner), .stopping(let owner): return owner.epoch
        case .standingBy, .steppingDown, .stopped: return nil
        }
    }

    private static func inconsistent(_ event: String, _ state: State) -> Never {
        preconditionFailure("internal inconsistency: sync event \(event) in state \(state)")
    }

    // MARK: - The session: ownership

    enum BecameOwnerAction: Equatable, Sendable {
        /// Report the new epoch, then make and start the engine (whose loop sends ``start(status:)``).
        case startEngine(epoch: Int64)
        /// A stop came first (and released ownership): nothing to start.
        case none
    }

    /// The election gave this process ownership with `epoch`.
    mutating func becameOwner(epoch: Int64) -> BecameOwnerAction {
        switch current {
        case .standingBy:
            current = .idle(Owner(epoch: epoch, backoff: Backoff(initial: retryBackoff.initial.seconds, maximum: retryBackoff.maximum.seconds)))
            return .startEngine(epoch: epoch)
        case .stopped:
            return .none
        case .idle, .syncing, .backingOff, .stopping, .steppingDown:
            // An election runs only while standing by; a step-down offers again only once it ended.
            Self.inconsistent("becameOwner", current)
        }
    }

    enum StopAction: Equatable, Sendable {
        /// Stop waiting for ownership (release the election, end the backend's waits), report
        /// the stop, then end the events.
        case stopWaiting
        /// Stop the engine (waiting for its loop's last write), release ownership, report the
        /// stop, end the events, then send ``engineStopped()``.
        case stopEngine
        /// Stopped already.
        case none
    }

    /// ``SyncSession/stop()``, the release of a session, or a failure that ends it.
    mutating func stopRequested() -> StopAction {
        switch current {
        case .standingBy:
            current = .stopped
            return .stopWaiting
        case .idle(let owner), .syncing(let owner), .backingOff(let owner):
            current = .stopping(owner)
            return .stopEngine
        case .steppingDown:
            // The loop has ended or is ending: stopping the engine waits for it; no offer follows.
            current = .stopped
            return .stopEngine
        case .stopping, .stopped:
            return .none
        }
    }

    /// The engine was stopped after ``StopAction/stopEngine``: its loop has ended.
    mutating func engineStopped() {
        switch current {
        case .stopping, .stopped:
            current = .stopped
        case .standingBy, .idle, .syncing, .backingOff, .steppingDown:
            Self.inconsistent("engineStopped", current)
        }
    }

    enum SteppedDownAction: Equatable, Sendable {
        /// Join the election again.
        case offerAgain
        /// A stop came meanwhile: stay stopped.
        case none
    }

    /// After a step-down: the engine stopped and ownership released.
    mutating func steppedDown() -> SteppedDownAction {
        switch current {
        case .steppingDown:
            current = .standingBy
            return .offerAgain
        case .stopped:
            return .none
        case .standingBy, .idle, .syncing, .backingOff, .stopping:
            Self.inconsistent("steppedDown", current)
        }
    }

    // MARK: - The owner's loop (``SyncEngine``): passes, status writes, backoff, the stale epoch

    enum StartAction: Equatable, Sendable {
        case runPass
        /// A stop came first: end the loop.
        case finish
    }

    /// The engine's loop starts, with the status as stored (the backend's name set).
    mutating func start(status: SyncStatus) -> StartAction {
        switch current {
        case .idle(var owner):
            owner.status = status
            current = .syncing(owner)
            return .runPass
        case .stopping, .stopped:
            return .finish
        case .standingBy, .syncing, .backingOff, .steppingDown:
            Self.inconsistent("start", current)
        }
    }

    enum WokenAction: Equatable, Sendable {
        case runPass
        /// Nothing to do: a running pass reads the queue afresh; a backoff is sat out; a
        /// step-down is under way.
        case none
        /// Stopping: end the loop.
        case finish
    }

    /// A local commit touched the upload queue, the backend announced changes, a stop woke the
    /// loop, or the time a pass left its own uploads' answers for has passed.
    mutating func woken() -> WokenAction {
        switch current {
        case .idle(let owner):
            current = .syncing(owner)
            return .runPass
        case .syncing, .backingOff, .steppingDown:
            return .none
        case .stopping, .stopped:
            return .finish
        case .standingBy:
            Self.inconsistent("woken", current)
        }
    }

    enum BackoffElapsedAction: Equatable, Sendable {
        case runPass
        /// Stopping: end the loop.
        case finish
    }

    /// The delay after a failure has passed (or a stop ended it early).
    mutating func backoffElapsed() -> BackoffElapsedAction {
        switch current {
        case .backingOff(let owner):
            current = .syncing(owner)
            return .runPass
        case .stopping, .stopped:
            return .finish
        case .standingBy, .idle, .syncing, .steppingDown:
            Self.inconsistent("backoffElapsed", current)
        }
    }

    /// A pass succeeded: records it in the status (connected, synced at `now`, the lags, a full
    /// sync) and returns the status to write now, if it changed or was last written over
    /// ``statusRefreshInterval`` ago; nil: nothing to write. Before ``passSucceeded(moreToUpload:)``,
    /// since a fenced status write that fails makes the pass fail.
    mutating func passRecorded(fullSync: String?, lags: (upload: Date?, download: Date?), now: Date) -> SyncStatus? {
        switch current {
        case .syncing(var owner):
            let write = Self.record(&owner, fullSync: fullSync, lags: lags, now: now)
            current = .syncing(owner)
            return write
        case .stopping(var owner):
            // A stop came during the pass: its status is written all the same.
            let write = Self.record(&owner, fullSync: fullSync, lags: lags, now: now)
            current = .stopping(owner)
            return write
        case .standingBy, .idle, .backingOff, .steppingDown, .stopped:
            Self.inconsistent("passRecorded", current)
        }
    }

    private static func record(_ owner: inout Owner, fullSync: String?, lags: (upload: Date?, download: Date?), now: Date) -> SyncStatus? {
        var status = owner.status
        let changed =
            !status.connected || status.lastFailure != nil || !status.hasSynced || fullSync != nil
            || (status.uploadPendingSince == nil) != (lags.upload == nil) || (status.downloadPendingSince == nil) != (lags.download == nil)
            || isStale(owner, now: now)
        status.uploadPendingSince = lags.upload
        status.downloadPendingSince = lags.download
        if let fullSync { status.lastFullSync = .init(at: now, reason: fullSync) }
        status.connected = true
        status.lastFailure = nil
        status.nextRetryAt = nil
        status.hasSynced = true
        status.lastSyncedAt = now
        owner.status = status
        guard changed else { return nil }
        owner.lastStatusWrite = now
        return status
    }

    private static func isStale(_ owner: Owner, now: Date) -> Bool {
        owner.lastStatusWrite.map { now.timeIntervalSince($0) > statusRefreshInterval } ?? true
    }

    enum PassSucceededAction: Equatable, Sendable {
        /// More was queued than one pass uploads: run again at once.
        case runPass
        /// Wait for a wake-up (or a stop); with `timeout` (seconds), send ``woken()`` when it
        /// has passed without one, too.
        case waitForWakeUp(timeout: Double?)
        /// Stopping: end the loop.
        case finish
    }

    /// - Parameter answersDueIn: the pass left its own uploads' answers to a later pass, which
    ///   is due in this many seconds (``PassSchedule/ownAnswersGathering``) unless a wake-up
    ///   comes first; nil: nothing is left.
    mutating func passSucceeded(moreToUpload: Bool, answersDueIn: Double? = nil) -> PassSucceededAction {
        switch current {
        case .syncing(var owner):
            owner.backoff.reset()
            current = moreToUpload ? .syncing(owner) : .idle(owner)
            return moreToUpload ? .runPass : .waitForWakeUp(timeout: answersDueIn)
        case .stopping:
            return .finish
        case .standingBy, .idle, .backingOff, .steppingDown, .stopped:
            Self.inconsistent("passSucceeded", current)
        }
    }

    enum PassFailedAction: Equatable, Sendable {
        /// Report the failure, write `writeStatus` if there is one (a failed write changes
        /// nothing), then wait `seconds` before ``backoffElapsed()``.
        case backOff(seconds: Double, failure: SyncFailure, writeStatus: SyncStatus?)
        /// Stopping: end the loop (the failure is not reported).
        case finish
    }

    /// A pass failed (its status write included), for a reason other than a stale epoch.
    /// - Parameter uploadPendingSince: since when the queue's head has waited (the status says so).
    mutating func passFailed(_ failure: SyncFailure, uploadPendingSince: Date?, now: Date) -> PassFailedAction {
        switch current {
        case .syncing(var owner):
            owner.status.uploadPendingSince = uploadPendingSince
            let changed = owner.status.lastFailure != failure || owner.status.connected || Self.isStale(owner, now: now)
            owner.status.lastFailure = failure
            owner.status.connected = false
            if changed { owner.lastStatusWrite = now }
            let seconds = owner.backoff.next()
            // What a written status says of the next try (a status the same failure leaves unwritten
            // keeps the one of the failure before: at most the backoff's 5 s behind).
            owner.status.nextRetryAt = now.addingTimeInterval(seconds)
            current = .backingOff(owner)
            return .backOff(seconds: seconds, failure: failure, writeStatus: changed ? owner.status : nil)
        case .stopping:
            return .finish
        case .standingBy, .idle, .backingOff, .steppingDown, .stopped:
            Self.inconsistent("passFailed", current)
        }
    }

    enum StaleEpochAction: Equatable, Sendable {
        /// Report the lost ownership and end the loop; the session then stops the engine,
        /// releases ownership and sends ``steppedDown()``.
        case stepDown(reason: String)
        /// Stopping: end the loop (ownership is released by the stop).
        case finish
    }

    /// A fenced sync write found a newer epoch (or the backend refused this one): another
    /// process owns sync now.
    mutating func staleEpoch(_ reason: String) -> StaleEpochAction {
        switch current {
        case .idle, .syncing, .backingOff:
            current = .steppingDown(reason: reason)
            return .stepDown(reason: reason)
        case .stopping:
            return .finish
        case .standingBy, .steppingDown, .stopped:
            Self.inconsistent("staleEpoch", current)
        }
    }
}
