/// The decisions of ``PostgresBackend/waitForChanges(after:timeout:)``, as a value that does no
/// I/O and reads no clock: the wait takes turns on the backend's connection and, between them,
/// waits in poll(2) on its socket; at each step it tells this value what it found and carries
/// out the ``Action`` it answers.
///
/// The wait looks at the feed's position only when it must: at the start of a wait after
/// another cursor than the last one it found nothing after while listening (``checkedCursor``),
/// after a (re)connect (notifications sent meanwhile are lost), when a notification announced
/// news it cannot take as it is, and at least every ``lookInterval`` (a connection a network
/// dropped without a word, or a change that sent no notification, shows within it). A
/// notification of Tandem's from another session answers at once, with the cursor the wait was
/// given, for a client that sees every change (its pass reads the position with its first page).
/// The state outlives one wait: a wait after the cursor the last one checked needs no look.
struct FeedWait: Equatable, Sendable {
    typealias Instant = ContinuousClock.Instant

    /// The longest the wait goes without looking.
    let lookInterval: Duration
    /// A cursor after which the wait found no change, listening since before it looked: a later
    /// change is announced, so a wait after it needs no look first.
    var checkedCursor: String?
    /// The connection (its ``PostgresBackend`` generation) `checkedCursor` was checked on.
    private(set) var checkedGeneration = 0
    /// When the wait last looked at the feed's position.
    private(set) var lastLook: Instant?
    /// Whether the last look found row-level security off for this login role (not a scoped
    /// client): every notification of Tandem's from another session then announces a change it
    /// downloads.
    private(set) var seesEveryChange = false
    /// The cursor of the wait under way, and whether it looks at its next turn.
    private var cursor = ""
    private var look = false

    init(lookInterval: Duration) {
        self.lookInterval = lookInterval
    }

    /// What the wait does next.
    enum Action: Equatable, Sendable {
        /// Return: a pass has work to do from this cursor.
        case changes(String)
        /// Read the feed's position after the cursor (the connection held), then ``looked(_:listening:)``.
        case look
        /// Read the notifications libpq holds (the connection held), then
        /// ``read(_:remaining:listening:at:)``.
        case readNotifications
        /// Release the connection and wait in poll(2) on its socket (or, not listening, on
        /// nothing) for at most this long, then take a turn; a poll(2) interrupted by a stop
        /// ends the wait.
        case poll(Duration)
        /// Return nothing: the deadline passed.
        case timedOut
    }

    /// A wait after `cursor` begins.
    mutating func begin(after cursor: String) {
        self.cursor = cursor
        look = cursor != checkedCursor
    }

    /// What a turn on the connection found before anything else.
    struct Turn: Equatable, Sendable {
        /// The backend's connection count: another connection than the last turn's lost what was
        /// announced on the one before.
        var generation: Int
        /// Whether the connection listens (a pooler in transaction mode cannot `LISTEN`).
        var listening: Bool
        /// What statements read meanwhile announced (``PostgresBackend/Announcement``), with
        /// the changes the cursor holds already left out.
        var announced: PostgresBackend.Announcement
    }

    /// A turn on the connection begins at `now`.
    mutating func turn(_ turn: Turn, at now: Instant) -> Action {
        if turn.generation != checkedGeneration {
            checkedGeneration = turn.generation
            checkedCursor = nil
            look = true
        }
        if let lastLook, lastLook.duration(to: now) >= lookInterval { look = true }
        if turn.announced == .change && !look && turn.listening && seesEveryChange { return .changes(cursor) }
        if turn.announced != .nothing { look = true }
        guard look || !turn.listening else { return .readNotifications }
        // After every (re)connect and wake-up the wait reads from the cursor: notifications
        // are wake-ups only.
        checkedCursor = nil
        lastLook = now
        return .look
    }

    /// What a look at the feed's position found.
    struct Look: Equatable, Sendable {
        /// Whether row-level security applies to the login role.
        var scoped: Bool
        /// Whether a pass has work from the cursor: changes after it, or a full sync due (no
        /// settled cursor, history no longer current, the cursor unusable).
        var hasWork: Bool
        /// The cursor settled at the position read.
        var settledCursor: String
    }

    /// The look ran, on a connection that listens or not.
    mutating func looked(_ found: Look, listening: Bool) -> Action {
        seesEveryChange = !found.scoped
        if found.hasWork {
            // The next wait starts from here.
            checkedCursor = listening ? found.settledCursor : nil
            return .changes(found.settledCursor)
        }
        checkedCursor = listening ? cursor : nil
        look = false
        return .readNotifications
    }

    /// The notifications read announce `found` (changes the cursor holds left out), at `now`
    /// with `remaining` left to the wait's deadline: the turn's last step.
    mutating func read(_ found: PostgresBackend.Announcement, remaining: Duration, listening: Bool, at now: Instant) -> Action {
        switch found {
        case .change where seesEveryChange: return .changes(cursor)
        case .change, .something: look = true
        case .nothing: break
        }
        return afterTurn(remaining: remaining, listening: listening, at: now)
    }

    /// The turn ended without an answer. A look due at once still ends at the deadline (and on
    /// an interrupt: poll(2) does not wait then), so news that keeps coming cannot hold a wait
    /// past either.
    private func afterTurn(remaining: Duration, listening: Bool, at now: Instant) -> Action {
        guard remaining > .zero else { return .timedOut }
        if look { return .poll(.zero) }
        let untilLook = lastLook.map { lookInterval - $0.duration(to: now) } ?? .zero
        // Not listening: poll every second. One millisecond more, so that a look due is due.
        return .poll(max(.zero, min(remaining, listening ? untilLook : .seconds(1))) + .milliseconds(1))
    }
}
