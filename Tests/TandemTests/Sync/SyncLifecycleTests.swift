import Foundation
import Testing
@testable import Tandem

/// ``SyncStateMachine``, every event in every state: what each returns and where it leaves the
/// machine, or that it traps ("internal inconsistency") where the event cannot happen. No files,
/// threads or processes (but a child process for each trap).
@Suite struct SyncLifecycleTests {
    typealias Machine = SyncStateMachine
    typealias Phase = SyncStateMachine.Phase

    static let locked = SyncFailure(kind: .backendUnavailable, message: "database is locked")
    static let refused = SyncFailure(kind: .rejectedUpload, message: "refused")

    /// A machine in `phase`, reached by the events the session and the engine send.
    static func machine(in phase: Phase) -> Machine {
        var machine = Machine()
        switch phase {
        case .standingBy:
            break
        case .idle:
            _ = machine.becameOwner(epoch: 7)
        case .syncing:
            _ = machine.becameOwner(epoch: 7)
            _ = machine.start(status: SyncStatus())
        case .backingOff:
            _ = machine.becameOwner(epoch: 7)
            _ = machine.start(status: SyncStatus())
            _ = machine.passFailed(locked, uploadPendingSince: nil, now: Date(timeIntervalSince1970: 0))
        case .stopping:
            _ = machine.becameOwner(epoch: 7)
            _ = machine.stopRequested()
        case .steppingDown:
            _ = machine.becameOwner(epoch: 7)
            _ = machine.start(status: SyncStatus())
            _ = machine.staleEpoch("epoch 7 < 8")
        case .stopped:
            _ = machine.stopRequested()
        }
        #expect(machine.phase == phase)
        return machine
    }

    enum Event: String, CaseIterable, Sendable {
        case becameOwner, stopRequested, engineStopped, steppedDown, start, woken, backoffElapsed
        case passRecorded, passSucceeded, passSucceededWithMore, passSucceededLeavingAnswers, passFailed, staleEpoch
    }

    /// Sends `event`; its action, described.
    static func send(_ event: Event, to machine: inout Machine) -> String {
        let now = Date(timeIntervalSince1970: 100)
        switch event {
        case .becameOwner: return "\(machine.becameOwner(epoch: 8))"
        case .stopRequested: return "\(machine.stopRequested())"
        case .engineStopped: machine.engineStopped(); return "()"
        case .steppedDown: return "\(machine.steppedDown())"
        case .start: return "\(machine.start(status: SyncStatus()))"
        case .woken: return "\(machine.woken())"
        case .backoffElapsed: return "\(machine.backoffElapsed())"
        case .passRecorded: return machine.passRecorded(fullSync: nil, lags: (nil, nil), now: now) == nil ? "no write" : "write"
        case .passSucceeded: return "\(machine.passSucceeded(moreToUpload: false))"
        case .passSucceededWithMore: return "\(machine.passSucceeded(moreToUpload: true))"
        case .passSucceededLeavingAnswers: return "\(machine.passSucceeded(moreToUpload: false, answersDueIn: 0.05))"
        case .passFailed: return "\(machine.passFailed(refused, uploadPendingSince: nil, now: now))"
        case .staleEpoch: return "\(machine.staleEpoch("epoch 7 < 9"))"
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var phase: Phase
        var event: Event
        /// The action described, and the phase after; nil: the event traps in this phase.
        var action: String?
        var after: Phase?
        var testDescription: String { "\(event) in \(phase)" }
    }

    static func row(_ phase: Phase, _ event: Event, _ action: String, _ after: Phase) -> Row {
        Row(phase: phase, event: event, action: action, after: after)
    }

    static func traps(_ phase: Phase, _ event: Event) -> Row { Row(phase: phase, event: event, action: nil, after: nil) }

    /// A first failure at time 100: the next try 0.05 s (the backoff's first step) later.
    static let backOff =
        "\(Machine.PassFailedAction.backOff(seconds: 0.05, failure: refused, writeStatus: failedStatus(after: SyncStatus(), retryAt: Date(timeIntervalSince1970: 100.05))))"

    static func failedStatus(after status: SyncStatus, retryAt: Date? = nil) -> SyncStatus {
        var status = status
        status.lastFailure = refused
        status.connected = false
        status.nextRetryAt = retryAt
        return status
    }

    /// Every event in every phase.
    static let table: [Row] = [
        // A stand-by: ownership comes, or a stop.
        row(.standingBy, .becameOwner, "startEngine(epoch: 8)", .idle),
        row(.standingBy, .stopRequested, "stopWaiting", .stopped),
        traps(.standingBy, .engineStopped), traps(.standingBy, .steppedDown), traps(.standingBy, .start),
        traps(.standingBy, .woken), traps(.standingBy, .backoffElapsed), traps(.standingBy, .passRecorded),
        traps(.standingBy, .passSucceeded), traps(.standingBy, .passSucceededWithMore), traps(.standingBy, .passFailed),
        traps(.standingBy, .passSucceededLeavingAnswers), traps(.standingBy, .staleEpoch),
        // Owner, before the loop's first pass and between passes.
        traps(.idle, .becameOwner),
        row(.idle, .stopRequested, "stopEngine", .stopping),
        traps(.idle, .engineStopped), traps(.idle, .steppedDown),
        row(.idle, .start, "runPass", .syncing),
        row(.idle, .woken, "runPass", .syncing),
        traps(.idle, .backoffElapsed), traps(.idle, .passRecorded), traps(.idle, .passSucceeded),
        traps(.idle, .passSucceededWithMore), traps(.idle, .passSucceededLeavingAnswers), traps(.idle, .passFailed),
        row(.idle, .staleEpoch, "stepDown(reason: \"epoch 7 < 9\")", .steppingDown),
        // A pass running.
        traps(.syncing, .becameOwner),
        row(.syncing, .stopRequested, "stopEngine", .stopping),
        traps(.syncing, .engineStopped), traps(.syncing, .steppedDown), traps(.syncing, .start),
        row(.syncing, .woken, "none", .syncing),
        traps(.syncing, .backoffElapsed),
        row(.syncing, .passRecorded, "write", .syncing),
        row(.syncing, .passSucceeded, "waitForWakeUp(timeout: nil)", .idle),
        row(.syncing, .passSucceededWithMore, "runPass", .syncing),
        row(.syncing, .passSucceededLeavingAnswers, "waitForWakeUp(timeout: Optional(0.05))", .idle),
        row(.syncing, .passFailed, backOff, .backingOff),
        row(.syncing, .staleEpoch, "stepDown(reason: \"epoch 7 < 9\")", .steppingDown),
        // Backing off.
        traps(.backingOff, .becameOwner),
        row(.backingOff, .stopRequested, "stopEngine", .stopping),
        traps(.backingOff, .engineStopped), traps(.backingOff, .steppedDown), traps(.backingOff, .start),
        row(.backingOff, .woken, "none", .backingOff),
        row(.backingOff, .backoffElapsed, "runPass", .syncing),
        traps(.backingOff, .passRecorded), traps(.backingOff, .passSucceeded), traps(.backingOff, .passSucceededWithMore),
        traps(.backingOff, .passSucceededLeavingAnswers), traps(.backingOff, .passFailed),
        row(.backingOff, .staleEpoch, "stepDown(reason: \"epoch 7 < 9\")", .steppingDown),
        // Stopping: the loop ends at its next event; a pass's status is still written.
        traps(.stopping, .becameOwner),
        row(.stopping, .stopRequested, "none", .stopping),
        row(.stopping, .engineStopped, "()", .stopped),
        traps(.stopping, .steppedDown),
        row(.stopping, .start, "finish", .stopping),
        row(.stopping, .woken, "finish", .stopping),
        row(.stopping, .backoffElapsed, "finish", .stopping),
        row(.stopping, .passRecorded, "write", .stopping),
        row(.stopping, .passSucceeded, "finish", .stopping),
        row(.stopping, .passSucceededWithMore, "finish", .stopping),
        row(.stopping, .passSucceededLeavingAnswers, "finish", .stopping),
        row(.stopping, .passFailed, "finish", .stopping),
        row(.stopping, .staleEpoch, "finish", .stopping),
        // Stepping down: the loop has ended; the session releases ownership and offers again.
        traps(.steppingDown, .becameOwner),
        row(.steppingDown, .stopRequested, "stopEngine", .stopped),
        traps(.steppingDown, .engineStopped),
        row(.steppingDown, .steppedDown, "offerAgain", .standingBy),
        traps(.steppingDown, .start),
        row(.steppingDown, .woken, "none", .steppingDown),
        traps(.steppingDown, .backoffElapsed), traps(.steppingDown, .passRecorded), traps(.steppingDown, .passSucceeded),
        traps(.steppingDown, .passSucceededWithMore), traps(.steppingDown, .passSucceededLeavingAnswers), traps(.steppingDown, .passFailed),
        traps(.steppingDown, .staleEpoch),
        // Stopped, for good.
        row(.stopped, .becameOwner, "none", .stopped),
        row(.stopped, .stopRequested, "none", .stopped),
        row(.stopped, .engineStopped, "()", .stopped),
        row(.stopped, .steppedDown, "none", .stopped),
        row(.stopped, .start, "finish", .stopped),
        row(.stopped, .woken, "finish", .stopped),
        row(.stopped, .backoffElapsed, "finish", .stopped),
        traps(.stopped, .passRecorded), traps(.stopped, .passSucceeded), traps(.stopped, .passSucceededWithMore),
        traps(.stopped, .passSucceededLeavingAnswers), traps(.stopped, .passFailed), traps(.stopped, .staleEpoch),
    ]

    @Test func theTableHasEveryEventInEveryPhase() {
        let phases: [Phase] = [.standingBy, .idle, .syncing, .backingOff, .stopping, .steppingDown, .stopped]
        for phase in phases {
            for event in Event.allCases {
                #expect(Self.table.filter { $0.phase == phase && $0.event == event }.count == 1, "\(event) in \(phase)")
            }
        }
        #expect(Self.table.count == phases.count * Event.allCases.count)
    }

    @Test(arguments: table.filter { $0.action != nil })
    func anEventThatCanHappen(_ row: Row) {
        var machine = Self.machine(in: row.phase)
        #expect(Self.send(row.event, to: &machine) == row.action)
        #expect(machine.phase == row.after)
    }

    @Test(arguments: table.filter { $0.action == nil })
    func anEventThatCannotHappenTraps(_ row: Row) async {
        let index: Int = Self.table.firstIndex { $0.phase == row.phase && $0.event == row.event } ?? -1
        await #expect(processExitsWith: .failure) { [index = index as Int] in
            let row = SyncLifecycleTests.table[index]
            var machine = SyncLifecycleTests.machine(in: row.phase)
            _ = SyncLifecycleTests.send(row.event, to: &machine)
        }
    }

    // MARK: - Data the states carry

    @Test func theOwnersEpochLastsUntilItStepsDownOrStops() {
        var machine = Machine()
        #expect(machine.epoch == nil)
        _ = machine.becameOwner(epoch: 3)
        #expect(machine.epoch == 3)
        _ = machine.start(status: SyncStatus())
        _ = machine.passFailed(Self.locked, uploadPendingSince: nil, now: Date())
        #expect(machine.epoch == 3)
        _ = machine.staleEpoch("epoch 3 < 4")
        #expect(machine.epoch == nil)
        #expect(machine.steppedDown() == .offerAgain)
        #expect(machine.becameOwner(epoch: 5) == .startEngine(epoch: 5))
        _ = machine.stopRequested()
        #expect(machine.epoch == 5, "stopping: the loop's last write is still this owner's")
        machine.engineStopped()
        #expect(machine.epoch == nil)
    }

    @Test func theStatusIsWrittenWhenItChangesOrOnceASecond() throws {
        var machine = Machine()
        _ = machine.becameOwner(epoch: 1)
        var stored = SyncStatus()
        stored.backend = "sqlite:/srv/server.db"
        _ = machine.start(status: stored)
        let t0 = Date(timeIntervalSince1970: 1_000)
        let firstWrite = machine.passRecorded(fullSync: nil, lags: (nil, nil), now: t0)
        let first = try #require(firstWrite, "connected for the first time")
        #expect(first.connected && first.hasSynced && first.lastSyncedAt == t0 && first.backend == stored.backend)
        _ = machine.passSucceeded(moreToUpload: true)
        #expect(machine.passRecorded(fullSync: nil, lags: (nil, nil), now: t0 + 0.5) == nil, "nothing changed within a second")
        _ = machine.passSucceeded(moreToUpload: true)
        #expect(machine.passRecorded(fullSync: nil, lags: (t0, nil), now: t0 + 0.6)?.uploadPendingSince == t0, "entries began to wait")
        _ = machine.passSucceeded(moreToUpload: true)
        #expect(machine.passRecorded(fullSync: nil, lags: (t0, nil), now: t0 + 0.7) == nil)
        _ = machine.passSucceeded(moreToUpload: true)
        #expect(machine.passRecorded(fullSync: nil, lags: (t0, t0), now: t0 + 0.8) != nil, "changes began to wait")
        _ = machine.passSucceeded(moreToUpload: true)
        #expect(machine.passRecorded(fullSync: "first sync", lags: (t0, t0), now: t0 + 0.9)?.lastFullSync?.reason == "first sync")
        _ = machine.passSucceeded(moreToUpload: true)
        #expect(machine.passRecorded(fullSync: nil, lags: (t0, t0), now: t0 + 1.8) == nil, "written under 1 s ago")
        _ = machine.passSucceeded(moreToUpload: true)
        #expect(machine.passRecorded(fullSync: nil, lags: (t0, t0), now: t0 + 1.91)?.lastSyncedAt == t0 + 1.91, "over 1 s since the write")
        _ = machine.passSucceeded(moreToUpload: true)

        // Failures: written when the failure is new, or once a second.
        guard case .backOff(_, _, let failed?) = machine.passFailed(Self.locked, uploadPendingSince: t0, now: t0 + 2) else {
            Issue.record("the first failure writes the status")
            return
        }
        #expect(!failed.connected && failed.lastFailure == Self.locked && failed.uploadPendingSince == t0)
        _ = machine.backoffElapsed()
        #expect(machine.passFailed(Self.locked, uploadPendingSince: t0, now: t0 + 2.5) == .backOff(seconds: 0.1, failure: Self.locked, writeStatus: nil))
        _ = machine.backoffElapsed()
        guard case .backOff(0.2, _, let refused?) = machine.passFailed(Self.refused, uploadPendingSince: t0, now: t0 + 2.6) else {
            Issue.record("another failure writes the status")
            return
        }
        #expect(refused.lastFailure == Self.refused)
        _ = machine.backoffElapsed()
        guard case .backOff(_, _, .some) = machine.passFailed(Self.refused, uploadPendingSince: t0, now: t0 + 3.7) else {
            Issue.record("the same failure over 1 s after the write writes the status")
            return
        }
        _ = machine.backoffElapsed()
        let recoveredWrite = machine.passRecorded(fullSync: nil, lags: (nil, nil), now: t0 + 3.8)
        let recovered = try #require(recoveredWrite, "a success after a failure")
        #expect(recovered.connected && recovered.lastFailure == nil && recovered.uploadPendingSince == nil)
        #expect(machine.passSucceeded(moreToUpload: false) == .waitForWakeUp(timeout: nil))
        _ = machine.woken()
        #expect(
            machine.passFailed(Self.locked, uploadPendingSince: nil, now: t0 + 3.9)
                == .backOff(
                    seconds: 0.05, failure: Self.locked,
                    writeStatus: Self.failedStatus(after: recovered, retryAt: (t0 + 3.9).addingTimeInterval(0.05)).with(failure: Self.locked)),
            "a success resets the backoff")
    }

    // MARK: - One-shot sync

    @Test func aOneShotSyncTriesAgainOnceAfterAStaleEpoch() {
        var once = OneShotSyncStateMachine()
        #expect(once.attemptFailed(staleEpoch: true) == .tryAgain)
        #expect(once.state == .attempting(number: 2))
        #expect(once.attemptFailed(staleEpoch: true) == .fail)
        #expect(once.state == .failed)

        var other = OneShotSyncStateMachine()
        #expect(other.attemptFailed(staleEpoch: false) == .fail)

        var retried = OneShotSyncStateMachine()
        _ = retried.attemptFailed(staleEpoch: true)
        #expect(retried.attemptFailed(staleEpoch: false) == .fail)

        var succeeded = OneShotSyncStateMachine()
        succeeded.attemptSucceeded()
        #expect(succeeded.state == .succeeded)
    }

    @Test func aOneShotSyncThatEndedTakesNoMoreEvents() async {
        await #expect(processExitsWith: .failure) {
            var once = OneShotSyncStateMachine()
            once.attemptSucceeded()
            _ = once.attemptFailed(staleEpoch: true)
        }
        await #expect(processExitsWith: .failure) {
            var once = OneShotSyncStateMachine()
            _ = once.attemptFailed(staleEpoch: false)
            once.attemptSucceeded()
        }
    }
}

private extension SyncStatus {
    func with(failure: SyncFailure) -> SyncStatus {
        var status = self
        status.lastFailure = failure
        status.connected = false
        return status
    }
}
