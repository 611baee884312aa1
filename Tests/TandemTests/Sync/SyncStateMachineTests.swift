import Testing
@testable import Tandem

/// The owner's sync loop, transition by transition: no files, threads or processes.
@Suite struct SyncStateMachineTests {
    let locked = SyncFailure(kind: .backendUnavailable, message: "database is locked")
    let again = SyncFailure(kind: .other, message: "again")

    @Test func startRunsAPassThenWaitsForAWakeUp() {
        var machine = SyncStateMachine()
        #expect(machine.handle(.start) == .runPass)
        #expect(machine.state == .syncing)
        #expect(machine.handle(.passSucceeded(moreToUpload: false)) == .waitForWakeUp)
        #expect(machine.state == .idle)
        #expect(machine.handle(.woken) == .runPass)
    }

    @Test func moreToUploadRunsAgainAtOnce() {
        var machine = SyncStateMachine()
        _ = machine.handle(.start)
        #expect(machine.handle(.passSucceeded(moreToUpload: true)) == .runPass)
        #expect(machine.state == .syncing)
    }

    @Test func failuresBackOffExponentiallyAndSuccessResets() {
        var machine = SyncStateMachine()
        _ = machine.handle(.start)
        #expect(machine.handle(.passFailed(locked)) == .backOff(seconds: 0.05, failure: locked))
        #expect(machine.state == .backingOff)
        #expect(machine.handle(.woken) == .none, "a local write does not cut a backoff short")
        #expect(machine.handle(.backoffElapsed) == .runPass)
        #expect(machine.handle(.passFailed(locked)) == .backOff(seconds: 0.1, failure: locked))
        _ = machine.handle(.backoffElapsed)
        #expect(machine.handle(.passFailed(locked)) == .backOff(seconds: 0.2, failure: locked))
        _ = machine.handle(.backoffElapsed)
        #expect(machine.handle(.passSucceeded(moreToUpload: false)) == .waitForWakeUp)
        _ = machine.handle(.woken)
        #expect(machine.handle(.passFailed(again)) == .backOff(seconds: 0.05, failure: again))
    }

    @Test func aStaleEpochStepsDownFromAnyActiveState() {
        for setUp in [[SyncStateMachine.Event.start], [.start, .passFailed(SyncFailure(kind: .other, message: "x"))], [.start, .passSucceeded(moreToUpload: false)]] {
            var machine = SyncStateMachine()
            for event in setUp { _ = machine.handle(event) }
            #expect(machine.handle(.staleEpoch("epoch 3 < 4")) == .stepDown("epoch 3 < 4"))
            #expect(machine.state == .steppedDown)
            #expect(machine.handle(.woken) == .none)
        }
    }

    @Test func stopFinishesFromEveryStateOnce() {
        for setUp in [[SyncStateMachine.Event](), [.start], [.start, .passFailed(SyncFailure(kind: .other, message: "x"))], [.start, .passSucceeded(moreToUpload: false)]] {
            var machine = SyncStateMachine()
            for event in setUp { _ = machine.handle(event) }
            #expect(machine.handle(.stopRequested) == .finish)
            #expect(machine.state == .stopped)
            #expect(machine.handle(.stopRequested) == .none)
            #expect(machine.handle(.start) == .none)
        }
    }
}
