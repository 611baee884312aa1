/// ``DatabaseSync/once(with:backendName:)``: one pass as a short-lived owner, tried again
/// once when the backend had seen a newer epoch.
struct OneShotSyncStateMachine: Sendable {
    enum State: Equatable, Sendable {
        /// Running attempt `number` (from 1).
        case attempting(number: Int)
        case succeeded
        case failed
    }

    private(set) var state: State = .attempting(number: 1)

    enum FailureAction: Equatable, Sendable {
        /// The pass raised the local epoch to the backend's: a second election starts above it.
        case tryAgain
        /// Throw the error.
        case fail
    }

    /// The attempt failed; `staleEpoch`: with ``TandemError/staleEpoch(held:current:)``.
    mutating func attemptFailed(staleEpoch: Bool) -> FailureAction {
        switch state {
        case .attempting(let number):
            if staleEpoch && number == 1 {
                state = .attempting(number: number + 1)
                return .tryAgain
            }
            state = .failed
            return .fail
        case .succeeded, .failed:
            preconditionFailure("internal inconsistency: a one-shot sync failed again after it ended (\(state))")
        }
    }

    mutating func attemptSucceeded() {
        switch state {
        case .attempting:
            state = .succeeded
        case .succeeded, .failed:
            preconditionFailure("internal inconsistency: a one-shot sync succeeded after it ended (\(state))")
        }
    }
}
