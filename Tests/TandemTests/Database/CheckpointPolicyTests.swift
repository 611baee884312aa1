import Foundation
import Testing
@testable import Tandem

/// ``CheckpointPolicy``'s decisions, branch by branch, without a database: each table row is
/// the facts a writer gathers and the decision it must get.
@Suite struct CheckpointPolicyTests {
    typealias Policy = CheckpointPolicy
    typealias Pass = CheckpointPolicy.Pass

    static let normal = Policy(synchronous: .normal, busyTimeoutMilliseconds: 5000)
    static let full = Policy(synchronous: .full, busyTimeoutMilliseconds: 5000)

    // MARK: - Construction

    struct Setting: Sendable, CustomTestStringConvertible {
        var synchronous: Configuration.Synchronous
        var busyTimeoutMilliseconds: Int32
        var whenAlone: Bool
        var waitNanoseconds: UInt64
        var testDescription: String { "\(synchronous.rawValue), busy timeout \(busyTimeoutMilliseconds) ms" }
    }

    @Test(arguments: [
        // The default busy timeout: the 100 ms cap.
        Setting(synchronous: .normal, busyTimeoutMilliseconds: 5000, whenAlone: true, waitNanoseconds: 100_000_000),
        // At FULL a writer alone does not leave its first pass to the thread.
        Setting(synchronous: .full, busyTimeoutMilliseconds: 5000, whenAlone: false, waitNanoseconds: 100_000_000),
        // A short busy timeout: a quarter of it.
        Setting(synchronous: .normal, busyTimeoutMilliseconds: 200, whenAlone: true, waitNanoseconds: 50_000_000),
        Setting(synchronous: .normal, busyTimeoutMilliseconds: 400, whenAlone: true, waitNanoseconds: 100_000_000),
        // No busy timeout (or a nonsense one): never wait.
        Setting(synchronous: .normal, busyTimeoutMilliseconds: 0, whenAlone: true, waitNanoseconds: 0),
        Setting(synchronous: .full, busyTimeoutMilliseconds: -1, whenAlone: false, waitNanoseconds: 0),
    ])
    func theConfigurationSetsWhenAloneAndTheWait(_ setting: Setting) {
        let policy = Policy(synchronous: setting.synchronous, busyTimeoutMilliseconds: setting.busyTimeoutMilliseconds)
        #expect(policy.whenAlone == setting.whenAlone)
        #expect(policy.waitNanoseconds == setting.waitNanoseconds)
    }

    // MARK: - Before the transaction

    struct Hold: Sendable, CustomTestStringConvertible {
        var name: String
        var facts: Policy.HoldFacts
        var decision: Policy.HoldDecision
        var testDescription: String { name }

        init(
            _ name: String, frames: Int64, waitFrames: Int64 = 0, pending: Bool = false, alone: Bool = false,
            unwaited: Bool = false, _ decision: Policy.HoldDecision
        ) {
            self.name = name
            facts = Policy.HoldFacts(
                walFrames: frames, waitFrames: waitFrames, catchUpPending: pending,
                writingAlone: alone, ownPassesUnwaited: unwaited)
            self.decision = decision
        }
    }

    @Test(arguments: [
        Hold("an empty WAL, nothing pending", frames: 0, .nothing),
        Hold("under the limit, nothing pending", frames: 2_999, .nothing),
        Hold("a catch-up pending under the limit", frames: 500, pending: true, .catchUp),
        // A writer alone at the threshold waits once for the passes it started.
        Hold("own passes unwaited at the threshold", frames: 1_000, alone: true, unwaited: true, .waitForOwnPasses),
        Hold("own passes unwaited, a catch-up pending too", frames: 1_500, pending: true, alone: true, unwaited: true, .waitForOwnPasses),
        Hold("own passes unwaited below the threshold", frames: 999, alone: true, unwaited: true, .nothing),
        Hold("own passes unwaited below the threshold, a catch-up pending", frames: 999, pending: true, alone: true, unwaited: true, .catchUp),
        // Not once others queue for the lock: they would wait too.
        Hold("own passes unwaited, others queued", frames: 1_500, alone: false, unwaited: true, .nothing),
        Hold("own passes unwaited, others queued, a catch-up pending", frames: 1_500, pending: true, unwaited: true, .catchUp),
        Hold("alone, own passes waited for already", frames: 1_500, alone: true, unwaited: false, .nothing),
        // The limit: wait (once) and copy everything; a wait that runs out moves the limit a limit on.
        Hold("at the limit", frames: 3_000, .catchUpAtLimit(waitingForOwnPasses: false, waitFramesIfItRunsOut: 6_000)),
        Hold(
            "past the limit, a catch-up pending", frames: 4_200, pending: true,
            .catchUpAtLimit(waitingForOwnPasses: false, waitFramesIfItRunsOut: 7_200)),
        Hold(
            "at the limit with own passes unwaited", frames: 3_000, alone: true, unwaited: true,
            .catchUpAtLimit(waitingForOwnPasses: true, waitFramesIfItRunsOut: 6_000)),
        Hold(
            "at the limit, own passes unwaited, others queued", frames: 3_000, unwaited: true,
            .catchUpAtLimit(waitingForOwnPasses: false, waitFramesIfItRunsOut: 6_000)),
        // After a wait ran out, holders wait again only at the raised limit.
        Hold("past the limit, under the raised one", frames: 5_999, waitFrames: 6_000, .nothing),
        Hold("past the limit, under the raised one, a catch-up pending", frames: 5_999, waitFrames: 6_000, pending: true, .catchUp),
        Hold("at the raised limit", frames: 6_000, waitFrames: 6_000, .catchUpAtLimit(waitingForOwnPasses: false, waitFramesIfItRunsOut: 9_000)),
        // A raised limit below the default one (a WAL that restarted since) leaves the default.
        Hold("a raised limit below the default", frames: 2_000, waitFrames: 1_000, .nothing),
        Hold(
            "the default limit over a lower raised one", frames: 3_000, waitFrames: 1_000,
            .catchUpAtLimit(waitingForOwnPasses: false, waitFramesIfItRunsOut: 6_000)),
    ])
    func beforeTheTransaction(_ row: Hold) {
        #expect(Self.normal.beforeTransaction(row.facts) == row.decision)
        // The synchronous setting decides nothing here: own passes exist only at NORMAL.
        #expect(Self.full.beforeTransaction(row.facts) == row.decision)
    }

    @Test func aBusyCatchUpRetriesWhileTimeIsLeft() {
        #expect(Self.normal.afterBusyCatchUp(nanosecondsLeft: 0) == .giveUp)
        #expect(Self.normal.afterBusyCatchUp(nanosecondsLeft: 1) == .retry(afterNanoseconds: 1_000_000))
        #expect(Self.normal.afterBusyCatchUp(nanosecondsLeft: 100_000_000) == .retry(afterNanoseconds: Policy.busyPauseNanoseconds))
    }

    @Test(
        arguments: [
            // Everything copied: the transaction's first write restarts the WAL.
            (Pass(frames: 3_000, copied: 3_000), Int64(0)),
            (Pass(frames: 0, copied: 0), 0),
            // A reader still needs the WAL: how far it got.
            (Pass(frames: 3_000, copied: 2_400), 2_400),
            (Pass(frames: 40, copied: 0), 0),
        ] as [(Pass, Int64)])
    func aCatchUpRecordsHowFarItGot(_ pass: Pass, checkpointed: Int64) {
        #expect(Self.normal.checkpointedFrames(afterCatchUp: pass) == checkpointed)
    }

    // MARK: - After the commit

    struct Commit: Sendable, CustomTestStringConvertible {
        var name: String
        var policy: Policy
        var facts: Policy.CommitFacts
        var decision: Policy.CommitDecision
        var testDescription: String { name }

        init(
            _ name: String, _ policy: Policy = CheckpointPolicyTests.normal, frames: Int64, checkpointed: Int64 = 0,
            alone: Bool = false, running: Bool = false, _ decision: Policy.CommitDecision
        ) {
            self.name = name
            self.policy = policy
            facts = Policy.CommitFacts(walFrames: frames, checkpointedFrames: checkpointed, writingAlone: alone, passesRunning: running)
            self.decision = decision
        }
    }

    @Test(arguments: [
        Commit("a small WAL", frames: 10, .nothing(.belowAloneThreshold)),
        Commit("just under a quarter threshold past the checkpoint", frames: 1_249, checkpointed: 1_000, alone: true, .nothing(.belowAloneThreshold)),
        // A writer alone at NORMAL leaves even the first pass to the thread, from a quarter threshold.
        Commit("alone, a quarter threshold past", frames: 250, alone: true, .passesOnThread(claim: 250)),
        Commit("alone, past the checkpoint", frames: 1_600, checkpointed: 1_300, alone: true, .passesOnThread(claim: 1_600)),
        Commit("alone, passes copying already", frames: 900, alone: true, running: true, .nothing(.passesRunning)),
        Commit("alone, passes copying, past the threshold", frames: 1_500, alone: true, running: true, .nothing(.passesRunning)),
        // The WAL restarted since the last checkpoint: counted from 0.
        Commit("a restarted WAL, alone", frames: 300, checkpointed: 2_000, alone: true, .passesOnThread(claim: 300)),
        Commit("a restarted WAL, small", frames: 200, checkpointed: 2_000, alone: true, .nothing(.belowAloneThreshold)),
        Commit("a restarted WAL, not alone, at the threshold", frames: 1_000, checkpointed: 2_000, .passHere(claim: 1_000)),
        // Others queued: the first pass on the writer's thread at the threshold.
        Commit("not alone, under the threshold", frames: 999, .nothing(.belowThreshold)),
        Commit("not alone, at the threshold", frames: 1_000, .passHere(claim: 1_000)),
        Commit("not alone, a threshold past the checkpoint", frames: 2_400, checkpointed: 1_400, .passHere(claim: 2_400)),
        Commit("not alone, passes of this process running", frames: 1_200, running: true, .passHere(claim: 1_200)),
        // At FULL a writer alone checkpoints as if others were queued.
        Commit("FULL, alone, under the threshold", CheckpointPolicyTests.full, frames: 600, alone: true, .nothing(.belowThreshold)),
        Commit("FULL, alone, at the threshold", CheckpointPolicyTests.full, frames: 1_000, alone: true, .passHere(claim: 1_000)),
        Commit("FULL, under a quarter threshold", CheckpointPolicyTests.full, frames: 100, alone: true, .nothing(.belowAloneThreshold)),
    ])
    func afterTheCommit(_ row: Commit) {
        #expect(row.policy.afterCommit(row.facts) == row.decision)
    }

    struct PassHere: Sendable, CustomTestStringConvertible {
        var name: String
        var pass: Pass?
        var committed: Int64
        var running: Bool
        var decision: Policy.PassHereDecision
        var testDescription: String { name }
    }

    @Test(arguments: [
        PassHere(name: "busy or failed", pass: nil, committed: 1_500, running: false, decision: .nothing),
        PassHere(
            name: "a reader kept frames", pass: Pass(frames: 1_000, copied: 900), committed: 1_500, running: false,
            decision: .finish(Pass(frames: 1_000, copied: 900))),
        PassHere(
            name: "little appended meanwhile", pass: Pass(frames: 1_000, copied: 1_000), committed: 1_032, running: false,
            decision: .finish(Pass(frames: 1_000, copied: 1_000))),
        PassHere(
            name: "more appended meanwhile", pass: Pass(frames: 1_000, copied: 1_000), committed: 1_033, running: false,
            decision: .morePassesOnThread(after: Pass(frames: 1_000, copied: 1_000))),
        PassHere(
            name: "more appended, the thread busy", pass: Pass(frames: 1_000, copied: 1_000), committed: 1_400, running: true,
            decision: .finish(Pass(frames: 1_000, copied: 1_000))),
    ])
    func afterAFirstPassOnTheWritersThread(_ row: PassHere) {
        #expect(Self.normal.afterPassHere(row.pass, walFramesCommitted: row.committed, passesRunning: row.running) == row.decision)
    }

    // MARK: - On the checkpoint thread

    /// One run of passes: the WAL's frames before each step, each pass's result, and how it ends.
    struct Run: Sendable, CustomTestStringConvertible {
        enum Event: Sendable {
            /// ``CheckpointPolicy/PassRun/next(walFramesCommitted:)`` with these frames must say `.pass`.
            case ask(Int64)
            /// A pass ended so (nil: busy or failed); ``passEnded(_:)`` must say go on.
            case passed(Pass?)
        }

        var name: String
        var run: Policy.PassRun
        var events: [Event]
        /// The last call: `next` with these frames, `passEnded` with this pass, or `connectionFailed`.
        var last: Last
        var end: Policy.PassRun.Step
        var testDescription: String { name }

        enum Last: Sendable { case ask(Int64), passed(Pass?), noConnection }
    }

    static let first = Pass(frames: 1_000, copied: 1_000)

    @Test(arguments: [
        // A writer alone's run starts with the first pass.
        Run(name: "alone: no connection", run: .aloneRun(), events: [], last: .noConnection, end: .abandon),
        Run(name: "alone: the first pass did not run", run: .aloneRun(), events: [.ask(300)], last: .passed(nil), end: .abandon),
        Run(
            name: "alone: little appended during the first pass", run: .aloneRun(),
            events: [.ask(300), .passed(Pass(frames: 300, copied: 300))], last: .ask(332),
            end: .finish(last: Pass(frames: 300, copied: 300), .caughtUp)),
        Run(
            name: "alone: a reader kept frames of the first pass", run: .aloneRun(),
            events: [.ask(300), .passed(Pass(frames: 300, copied: 200))], last: .ask(900),
            end: .finish(last: Pass(frames: 300, copied: 200), .caughtUp)),
        Run(
            name: "alone: the WAL reached the threshold", run: .aloneRun(),
            events: [.ask(300), .passed(Pass(frames: 300, copied: 300))], last: .ask(1_000),
            end: .finish(last: Pass(frames: 300, copied: 300), .walAtLimit)),
        Run(
            name: "alone: the second pass found little new", run: .aloneRun(),
            events: [.ask(300), .passed(Pass(frames: 300, copied: 300)), .ask(500)], last: .passed(Pass(frames: 332, copied: 332)),
            end: .finish(last: Pass(frames: 332, copied: 332), .caughtUp)),
        Run(
            name: "alone: the second pass did not run", run: .aloneRun(),
            events: [.ask(300), .passed(Pass(frames: 300, copied: 300)), .ask(500)], last: .passed(nil),
            end: .finish(last: Pass(frames: 300, copied: 300), .passFailed)),
        // After a first pass on the writer's thread.
        Run(
            name: "catching up: no connection", run: .catchUpRun(after: CheckpointPolicyTests.first), events: [], last: .noConnection,
            end: .finish(last: CheckpointPolicyTests.first, .noConnection)),
        Run(
            name: "catching up: little appended since the first pass", run: .catchUpRun(after: CheckpointPolicyTests.first), events: [], last: .ask(1_032),
            end: .finish(last: CheckpointPolicyTests.first, .caughtUp)),
        Run(
            name: "catching up: the WAL at 2,000 frames", run: .catchUpRun(after: CheckpointPolicyTests.first), events: [], last: .ask(2_000),
            end: .finish(last: CheckpointPolicyTests.first, .walAtLimit)),
        Run(
            name: "catching up: a pass did not run", run: .catchUpRun(after: CheckpointPolicyTests.first), events: [.ask(1_400)], last: .passed(nil),
            end: .finish(last: CheckpointPolicyTests.first, .passFailed)),
        Run(
            name: "catching up: a reader kept frames", run: .catchUpRun(after: CheckpointPolicyTests.first), events: [.ask(1_400)],
            last: .passed(Pass(frames: 1_400, copied: 1_100)), end: .finish(last: Pass(frames: 1_400, copied: 1_100), .caughtUp)),
        Run(
            name: "catching up: the WAL restarted meanwhile", run: .catchUpRun(after: CheckpointPolicyTests.first), events: [.ask(1_400)],
            last: .passed(Pass(frames: 80, copied: 80)), end: .finish(last: Pass(frames: 80, copied: 80), .caughtUp)),
        Run(
            name: "catching up: shorter passes until the WAL reaches 2,000", run: .catchUpRun(after: CheckpointPolicyTests.first),
            events: [
                .ask(1_400), .passed(Pass(frames: 1_400, copied: 1_400)), .ask(1_700),
                .passed(Pass(frames: 1_700, copied: 1_700)),
            ],
            last: .ask(2_050), end: .finish(last: Pass(frames: 1_700, copied: 1_700), .walAtLimit)),
        Run(
            name: "catching up: eight passes in all", run: .catchUpRun(after: CheckpointPolicyTests.first),
            events: (1...7).flatMap { i -> [Run.Event] in
                [.ask(1_000 + Int64(i) * 100), .passed(Pass(frames: 1_000 + Int64(i) * 100, copied: 1_000 + Int64(i) * 100))]
            },
            last: .ask(1_800), end: .finish(last: Pass(frames: 1_700, copied: 1_700), .passesUsed)),
    ])
    func aRunOfPassesOnTheCheckpointThread(_ row: Run) {
        var run = row.run
        for (index, event) in row.events.enumerated() {
            switch event {
            case .ask(let frames):
                #expect(run.next(walFramesCommitted: frames) == .pass, "event \(index)")
            case .passed(let pass):
                #expect(run.passEnded(pass) == nil, "event \(index)")
            }
        }
        switch row.last {
        case .ask(let frames): #expect(run.next(walFramesCommitted: frames) == row.end)
        case .passed(let pass): #expect(run.passEnded(pass) == row.end)
        case .noConnection: #expect(run.connectionFailed() == row.end)
        }
    }

    @Test func onlyARunAfterAFirstPassOnTheWritersThreadLeavesACatchUp() {
        #expect(Policy.PassRun.aloneRun().leavesCatchUp == false)
        #expect(Policy.PassRun.aloneRun().untilFrames == Policy.thresholdFrames)
        #expect(Policy.PassRun.catchUpRun(after: Self.first).leavesCatchUp == true)
        #expect(Policy.PassRun.catchUpRun(after: Self.first).untilFrames == Policy.passesUntilFrames)
        #expect(Policy.PassRun.catchUpRun(after: Self.first).passes == 1)
    }

    // MARK: - The shared record

    /// The lock file's layout, which processes running other builds of Tandem share.
    @Test func theSharedRecordKeepsItsLayout() {
        let fields: [(WritableKeyPath<WriteLockRecord, Int64>, Int)] = [
            (\.holder, 0), (\.streak, 8), (\.tickets, 16), (\.checkpointedFrames, 24), (\.catchUpPending, 32),
            (\.ticketsServed, 40), (\.walFramesCommitted, 48), (\.checkpointWaitFrames, 56), (\.migrating, 64),
        ]
        for (field, offset) in fields { #expect(MemoryLayout<WriteLockRecord>.offset(of: field) == offset, "\(field)") }
        #expect(MemoryLayout<WriteLockRecord>.size == 72)
        #expect(MemoryLayout<WriteLockRecord>.size <= WriteLockRecord.mappedSize)
    }

    /// Values written by another process are not trusted: the checkpoint fields read clamped.
    @Test func theSharedRecordClampsWhatItReads() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let lock = try WriteLock(path: path + "-write.lock", databasePath: path, mode: 0o600, streakLimit: 4, timeoutMilliseconds: 0)
        let other = try WriteLock(path: path + "-write.lock", databasePath: path, mode: 0o600, streakLimit: 4, timeoutMilliseconds: 0)
        #expect(lock.record.fields == WriteLockRecord())
        lock.record[\.checkpointedFrames] = -5
        lock.record[\.walFramesCommitted] = -1
        lock.record[\.checkpointWaitFrames] = .min
        lock.record[\.catchUpPending] = 7
        #expect(other.record.checkpointedFrames == 0)
        #expect(other.record.walFramesCommitted == 0)
        #expect(other.record.checkpointWaitFrames == 0)
        #expect(other.record.catchUpPending)
        other.record.catchUpPending = false
        other.record.walFramesCommitted = 1_234
        #expect(lock.record[\.catchUpPending] == 0)
        #expect(lock.record.fields.walFramesCommitted == 1_234)
        #expect(lock.record.drawTicket() == 0 && other.record.drawTicket() == 1 && lock.ticketsDrawn == 2)
    }
}
