import Testing
@testable import TandemPostgres

/// ``FeedWait``, row by row: each row is the steps of one or more waits, each step what the
/// wait found and the action it must answer. No server: the PostgreSQL wait's decisions alone.
@Suite struct FeedWaitTests {
    static let t0 = ContinuousClock.now
    static let interval = Duration.seconds(10), s = Duration.seconds(1), ms = Duration.milliseconds(1)

    /// One step of a wait, at `t0` plus an offset, with the action expected.
    enum Step {
        /// A wait after this cursor begins (no action).
        case begin(String)
        /// A turn on the connection (generation, listening, what statements read meanwhile).
        case turn(Int, listening: Bool, PostgresBackend.Announcement, at: Duration, FeedWait.Action)
        /// The look found (scoped, work, the settled cursor), on a connection listening or not.
        case looked(scoped: Bool, work: Bool, settled: String, listening: Bool, FeedWait.Action)
        /// The notifications read announce this, with this much time left.
        case read(PostgresBackend.Announcement, remaining: Duration, listening: Bool, at: Duration, FeedWait.Action)
    }

    struct Row: CustomTestStringConvertible {
        var name: String
        var steps: [Step]
        var testDescription: String { name }
    }

    /// A first wait after `c` on connection 1, listening, unscoped unless said: it looks at 0 s,
    /// finds nothing, and polls until the next look is due.
    static func firstWait(scoped: Bool = false) -> [Step] {
        [
            .begin("c"), .turn(1, listening: true, .nothing, at: .zero, .look),
            .looked(scoped: scoped, work: false, settled: "s", listening: true, .readNotifications),
            .read(.nothing, remaining: s * 30, listening: true, at: ms, .poll(interval - ms + ms)),
        ]
    }

    static let rows: [Row] = [
        Row(name: "a first wait looks, finds nothing, and polls until the next look is due", steps: firstWait()),
        Row(
            name: "a wait after the checked cursor does not look; it polls until its deadline",
            steps: firstWait() + [
                .begin("c"), .turn(1, listening: true, .nothing, at: s, .readNotifications),
                .read(.nothing, remaining: s * 5, listening: true, at: s, .poll(s * 5 + ms)),
            ]),
        Row(name: "a wait after another cursor looks", steps: firstWait() + [.begin("d"), .turn(1, listening: true, .nothing, at: s, .look)]),
        Row(
            name: "another connection: what was announced on the last one is lost, so the wait looks",
            steps: firstWait() + [.begin("c"), .turn(2, listening: true, .nothing, at: s, .look)]),
        Row(name: "the look interval is up: the wait looks", steps: firstWait() + [.begin("c"), .turn(1, listening: true, .nothing, at: interval, .look)]),
        Row(
            name: "Tandem's notification read by a statement ends an unscoped client's wait without a look",
            steps: firstWait() + [.begin("c"), .turn(1, listening: true, .change, at: s, .changes("c"))]),
        Row(
            name: "a scoped client looks first: another tenant's change wakes it too",
            steps: firstWait(scoped: true) + [.begin("c"), .turn(1, listening: true, .change, at: s, .look)]),
        Row(
            name: "another application's notification makes the wait look",
            steps: firstWait() + [.begin("c"), .turn(1, listening: true, .something, at: s, .look)]),
        Row(
            name: "Tandem's notification read in the turn ends an unscoped client's wait",
            steps: firstWait() + [
                .begin("c"), .turn(1, listening: true, .nothing, at: s, .readNotifications),
                .read(.change, remaining: s * 5, listening: true, at: s, .changes("c")),
            ]),
        Row(
            name: "another application's notification read in the turn: a look due at once",
            steps: firstWait() + [
                .begin("c"), .turn(1, listening: true, .nothing, at: s, .readNotifications),
                .read(.something, remaining: s * 5, listening: true, at: s, .poll(.zero)), .turn(1, listening: true, .nothing, at: s, .look),
            ]),
        Row(
            name: "a look due at once still ends at the deadline",
            steps: firstWait() + [
                .begin("c"), .turn(1, listening: true, .nothing, at: s, .readNotifications),
                .read(.something, remaining: .zero, listening: true, at: s, .timedOut),
            ]),
        Row(
            name: "a look that finds work answers with the position it read, where the next wait starts without a look",
            steps: [
                .begin("c"), .turn(1, listening: true, .nothing, at: .zero, .look),
                .looked(scoped: false, work: true, settled: "s2", listening: true, .changes("s2")),
                .begin("s2"), .turn(1, listening: true, .nothing, at: s, .readNotifications),
            ]),
        Row(
            name: "not listening: every turn looks, and the wait polls every second",
            steps: [
                .begin("c"), .turn(1, listening: false, .nothing, at: .zero, .look),
                .looked(scoped: false, work: false, settled: "s", listening: false, .readNotifications),
                .read(.nothing, remaining: s * 5, listening: false, at: .zero, .poll(s + ms)),
                .begin("c"), .turn(1, listening: false, .nothing, at: s, .look),
            ]),
        Row(
            name: "not listening, a look that found work checks no cursor",
            steps: [
                .begin("c"), .turn(1, listening: false, .nothing, at: .zero, .look),
                .looked(scoped: false, work: true, settled: "s2", listening: false, .changes("s2")),
                .begin("s2"), .turn(1, listening: true, .nothing, at: s, .look),
            ]),
        Row(
            name: "a change announced before the first look is no answer without one",
            steps: [.begin("c"), .turn(1, listening: true, .change, at: .zero, .look)]),
    ]

    @Test(arguments: rows) func eachStepAnswersItsAction(_ row: Row) {
        var wait = FeedWait(lookInterval: Self.interval)
        for (index, step) in row.steps.enumerated() {
            let action: FeedWait.Action, expected: FeedWait.Action
            switch step {
            case .begin(let cursor):
                wait.begin(after: cursor)
                continue
            case .turn(let generation, let listening, let announced, let at, let want):
                action = wait.turn(.init(generation: generation, listening: listening, announced: announced), at: Self.t0 + at)
                expected = want
            case .looked(let scoped, let work, let settled, let listening, let want):
                action = wait.looked(.init(scoped: scoped, hasWork: work, settledCursor: settled), listening: listening)
                expected = want
            case .read(let found, let remaining, let listening, let at, let want):
                action = wait.read(found, remaining: remaining, listening: listening, at: Self.t0 + at)
                expected = want
            }
            #expect(action == expected, "\(row.name), step \(index + 1)")
        }
    }
}
