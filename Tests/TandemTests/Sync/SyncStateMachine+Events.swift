@testable import Tandem

/// The owner loop's events as values, as `SyncStateMachineTests` sends them: each goes to the
/// machine's own method, and its action is told in the loop's terms. `start` is the owner's loop
/// starting (a stand-by first becomes owner, as the session does before it starts the engine).
extension SyncStateMachine {
    enum Event: Equatable {
        case start
        case woken
        case passSucceeded(moreToUpload: Bool)
        case passFailed(SyncFailure)
        case staleEpoch(String)
        case backoffElapsed
        case stopRequested
    }

    enum Action: Equatable {
        case runPass
        case waitForWakeUp
        case backOff(seconds: Double, failure: SyncFailure)
        case stepDown(String)
        case finish
        case none
    }

    /// The owner loop's states; a stand-by counts as idle, stopping as stopped.
    enum LoopState: Equatable { case idle, syncing, backingOff, steppedDown, stopped }

    var state: LoopState {
        switch phase {
        case .standingBy, .idle: return .idle
        case .syncing: return .syncing
        case .backingOff: return .backingOff
        case .steppingDown: return .steppedDown
        case .stopping, .stopped: return .stopped
        }
    }

    mutating func handle(_ event: Event) -> Action {
        switch event {
        case .start:
            if phase == .standingBy, becameOwner(epoch: 1) == .none { return .none }
            if phase == .stopped || phase == .stopping { return .none }
            switch start(status: SyncStatus()) {
            case .runPass: return .runPass
            case .finish: return .none
            }
        case .woken:
            if phase == .stopped || phase == .stopping { return .none }
            switch woken() {
            case .runPass: return .runPass
            case .none, .finish: return .none
            }
        case .passSucceeded(let more):
            if phase == .stopped || phase == .stopping { return .none }
            _ = passRecorded(fullSync: nil, lags: (nil, nil), now: .distantPast)
            switch passSucceeded(moreToUpload: more) {
            case .runPass: return .runPass
            case .waitForWakeUp: return .waitForWakeUp
            case .finish: return .none
            }
        case .passFailed(let failure):
            if phase == .stopped || phase == .stopping { return .none }
            switch passFailed(failure, uploadPendingSince: nil, now: .distantPast) {
            case .backOff(let seconds, let failure, _): return .backOff(seconds: seconds, failure: failure)
            case .finish: return .none
            }
        case .staleEpoch(let reason):
            if phase == .stopped || phase == .stopping { return .none }
            switch staleEpoch(reason) {
            case .stepDown(let reason): return .stepDown(reason)
            case .finish: return .none
            }
        case .backoffElapsed:
            if phase == .stopped || phase == .stopping { return .none }
            switch backoffElapsed() {
            case .runPass: return .runPass
            case .finish: return .none
            }
        case .stopRequested:
            switch stopRequested() {
            case .stopWaiting, .stopEngine:
                if phase == .stopping { engineStopped() }
                return .finish
            case .none:
                return .none
            }
        }
    }
}
