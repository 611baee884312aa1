/// The owner's sync loop as a pure state machine: each event returns the action the loop must
/// perform next; no files, threads or clocks here (swift-nio's state-machine style), so every
/// transition can be tested on its own.
///
/// ```text
///            start / woken                passSucceeded(more: false)
///   idle ─────────────────▶ syncing ────────────────────────────────▶ idle
///                            │   ▲  passSucceeded(more: true): run again
///         passFailed(error)  │   │  backoffElapsed
///                            ▼   │
///                         backingOff        passFailed(staleEpoch) ──▶ steppedDown
///   any state ── stopRequested ──▶ stopped
/// ```
struct SyncStateMachine: Equatable {
    enum State: Equatable {
        /// Owner, nothing to do until a wake-up (a local commit to the upload queue, or news from the backend).
        case idle
        /// A pass is running.
        case syncing
        /// A pass failed; the next runs when the delay has passed (wake-ups do not cut it short).
        case backingOff
        /// The epoch moved on: this process no longer owns sync.
        case steppedDown
        case stopped
    }

    enum Event: Equatable {
        case start
        /// A local commit touched the upload queue, or the backend announced changes.
        case woken
        case passSucceeded(moreToUpload: Bool)
        case passFailed(SyncFailure)
        /// A sync write found a newer epoch: another process owns sync now.
        case staleEpoch(String)
        case backoffElapsed
        case stopRequested
    }

    enum Action: Equatable {
        case runPass
        /// Wait for a wake-up (or a stop), with no timeout.
        case waitForWakeUp
        /// Report the failure, then wait `seconds` before the next pass.
        case backOff(seconds: Double, failure: SyncFailure)
        /// Release ownership and offer this process again.
        case stepDown(String)
        case finish
        /// Nothing to do for this event in this state.
        case none
    }

    private(set) var state: State = .idle
    private(set) var backoff = Backoff()

    mutating func handle(_ event: Event) -> Action {
        switch (state, event) {
        case (.stopped, _), (.steppedDown, _):
            return .none
        case (_, .stopRequested):
            state = .stopped
            return .finish
        case (_, .staleEpoch(let reason)):
            state = .steppedDown
            return .stepDown(reason)
        case (.idle, .start), (.idle, .woken), (.backingOff, .backoffElapsed):
            state = .syncing
            return .runPass
        case (.syncing, .passSucceeded(let more)):
            backoff.reset()
            if more { return .runPass }
            state = .idle
            return .waitForWakeUp
        case (.syncing, .passFailed(let error)):
            state = .backingOff
            return .backOff(seconds: backoff.next(), failure: error)
        default:
            // Among others, a wake-up while syncing or backing off: a running pass reads the
            // queue afresh; a backoff is sat out.
            return .none
        }
    }
}
