import Foundation
import Synchronization
import Testing
@testable import Tandem

/// An observer woken by its own process's commits alone passes the wake-up over without a
/// reading (``OwnRun``); any other commit among them is still read and reported.
@Suite struct OwnCommitsPassedOverTests {
    typealias Position = WALCommitCounter.Position
    typealias Reading = ChangeLedger.Reading

    @Test func aRunGrowsWhileEachCommitBeginsWhereTheLastEnded() throws {
        let at = { (commits: UInt32) in Position(salt: 9, commits: commits, frames: commits &* 3) }
        var run = try #require(OwnRun.after(nil, committedAt: at(4), sequence: 40))
        run.confirm(40)
        run = try #require(OwnRun.after(run, committedAt: at(5), sequence: 41))
        #expect(!run.covers(from: at(4), to: at(6)), "41's COMMIT not yet confirmed: the WAL at 6 may be another writer's")
        run.confirm(41)
        #expect(run.covers(from: at(4), to: at(6)) && run.newestSequence(through: at(6)) == 41)
        #expect(run.covers(from: at(5), to: at(6)), "a reading within the run")
        #expect(run.covers(from: at(6), to: at(6)))
        // The run's last commit told, not yet committed: the WAL stands at the one before.
        #expect(run.covers(from: at(4), to: at(5)) && run.newestSequence(through: at(5)) == 40, "a commit under way")
        #expect(!run.covers(from: at(5), to: at(4)), "the WAL does not go back")
        #expect(!run.covers(from: at(3), to: at(6)), "a commit before the run, unread")
        #expect(!run.covers(from: at(4), to: at(7)), "a commit after the run")
        run.drop(through: at(5))
        #expect(run.newestSequence(through: at(5)) == nil && run.newestSequence(through: at(6)) == 41, "passed over through 5")
        // Another writer's commit between two of ours starts a new run.
        run = try #require(OwnRun.after(run, committedAt: at(7), sequence: 43))
        run.confirm(43)
        #expect(!run.covers(from: at(4), to: at(8)))
        #expect(!run.covers(from: at(6), to: at(8)), "the other writer's commit 6 → 7, unread")
        #expect(run.covers(from: at(7), to: at(8)) && run.newestSequence(through: at(8)) == 43)
        var wrapping = try #require(OwnRun.after(OwnRun.after(nil, committedAt: at(0xffff_ffff), sequence: 1), committedAt: at(0), sequence: 2))
        wrapping.confirm(1)
        wrapping.confirm(2)
        #expect(wrapping.covers(from: at(0), to: at(1)) && !wrapping.covers(from: at(2), to: at(1)), "the counter wraps")
        #expect(wrapping.newestSequence(through: at(0)) == 1)
        // A restart of the WAL (salt-1 one up) or a new WAL is never predicted.
        #expect(!run.covers(from: at(7), to: Position(salt: 10, commits: 8)))
        var fresh = try #require(OwnRun.after(nil, committedAt: Position(salt: 0, commits: 0), sequence: 1))
        fresh.confirm(1)
        #expect(!fresh.covers(from: Position(salt: 0, commits: 0), to: Position(salt: 0, commits: 1)), "a commit that made the WAL")
        // A run kept unread past its longest is dropped.
        var long: OwnRun? = OwnRun.after(nil, committedAt: at(0), sequence: 0)
        for i in 1..<OwnRun.longest { long = OwnRun.after(long, committedAt: at(UInt32(i)), sequence: Int64(i)) }
        #expect(long != nil && OwnRun.after(long, committedAt: at(UInt32(OwnRun.longest)), sequence: 0) == nil)
    }

    /// After own commits passed over (their stamps count as read: a reading asks for newer ones),
    /// a reading that finds nothing newer reports nothing though `data_version` moved, one that
    /// finds another process's stamps reports them, and a writer that stamps nothing is still
    /// seen by the commit counter, or by `data_version` where there is no counter or a commit
    /// came between the counter's read and the snapshot. A commit told and not passed over (under
    /// way) stays to be skipped.
    @Test func theLedgerAfterOwnCommitsPassedOver() {
        let at = { (commits: UInt32) in Position(salt: 7, commits: commits) }
        var ledger = ChangeLedger()
        _ = ledger.update(with: Reading(stamps: [], dataVersion: 1, recordedCommits: at(10), commits: at(10)))
        ledger.recordOwn(3)
        ledger.recordOwn(4)
        ledger.passOverOwnCommits(through: 3)
        #expect(ledger.lastSequence == 3 && ledger.ownSequences == [4], "4 is under way")
        ledger.passOverOwnCommits(through: 4)
        #expect(ledger.lastSequence == 4 && ledger.ownSequences.isEmpty)
        #expect(ledger.update(with: Reading(stamps: [], dataVersion: 2, recordedCommits: at(12), commits: at(12))) == nil)
        ledger.recordOwn(5)
        ledger.passOverOwnCommits(through: 5)
        #expect(ledger.lastSequence == 5)
        let other = Reading(stamps: [("ps_data__todos", 6)], dataVersion: 3, recordedCommits: at(14), commits: at(14))
        #expect(ledger.update(with: other) == DatabaseChange(rawTables: ["ps_data__todos"]))
        ledger.recordOwn(7)
        ledger.passOverOwnCommits(through: 7)
        let shell = Reading(stamps: [], dataVersion: 4, recordedCommits: at(15), commits: at(16))
        #expect(ledger.update(with: shell) == .unknown, "an unstamped commit after ours")
        ledger.recordOwn(8)
        ledger.passOverOwnCommits(through: 8)
        #expect(ledger.update(with: Reading(stamps: [], dataVersion: 5)) == .unknown, "no counter: data_version tells")
        ledger.recordOwn(9)
        ledger.passOverOwnCommits(through: 9)
        var between = Reading(stamps: [], dataVersion: 6, recordedCommits: at(18), commits: at(18))
        between.settled = false
        #expect(ledger.update(with: between) == .unknown, "the shell committed between the counter's read and the snapshot")
    }

    /// Own commits pass over their wake-ups; another process's commit, and the sqlite3 shell's
    /// between two of ours, still reach the handlers.
    @Test func ownCommitsPassOverTheirWakeUpsAndOthersAreStillReported() throws {
        let dir = try TemporaryDirectory()
        let (db, seen, token) = try databaseWithoutPoll(at: dir.path("a.db"))
        defer { token.cancel() }
        for i in 0..<40 { try db.write { try $0.execute("INSERT INTO todos(what) VALUES (?)", ["own \(i)"]) } }
        // Each handler call above came in-process; the wake-up after the last is passed over.
        try waitUntil(timeout: 5, "a wake-up of the 40 own commits passed over") { db.observer.wakeUpsPassedOver > 0 }
        #expect(try runTandem(["exec", db.path, "INSERT INTO notes(id, title) VALUES ('other', 'from another process')"]).status == 0)
        try waitUntil(timeout: 5, "another process's commit to notes is reported") {
            seen.withLock { $0.contains { !$0.isUnknown && $0.tables.contains("notes") } }
        }
        // The shell commits between two of this process's commits, and wakes no one itself.
        seen.withLock { $0.removeAll() }
        try db.write { try $0.execute("INSERT INTO todos(what) VALUES ('before the shell')") }
        try sqliteShell(db.path, "INSERT INTO notes(id, title) VALUES ('s', 'from the shell')")
        try db.write { try $0.execute("INSERT INTO todos(what) VALUES ('after the shell')") }
        // Stamping nothing, it can only be reported as unknown tables (own commits name todos,
        // the other process's notes).
        try waitUntil(timeout: 5, "the shell's commit is reported") { seen.withLock { $0.contains { $0.isUnknown } } }
    }

    /// Another process commits, and this one commits right after, before its observer has read:
    /// the wake-up finds the WAL where this process's commit left it, but the reading before saw
    /// it before the other's commit, so the observer reads and reports it. The observer is held
    /// in a handler on its own thread while both commit.
    @Test func anotherProcesssCommitJustBeforeAnOwnOneIsRead() throws {
        let dir = try TemporaryDirectory()
        let (db, _, changeToken) = try databaseWithoutPoll(at: dir.path("a.db"))
        defer { changeToken.cancel() }
        let held = DispatchSemaphore(value: 0), holding = DispatchSemaphore(value: 0)
        let calls = Mutex<[DatabaseChange]>([])
        let writingHere = Mutex(false)
        let token = try db.addImmediateChangeHandler { change in
            guard !writingHere.withLock({ $0 }) else { return }  // this process's commit, told on its thread
            let first = calls.withLock {
                $0.append(change); return $0.count == 1
            }
            if first {
                holding.signal()
                held.wait()
            }
        }
        defer { token.cancel() }
        #expect(try runTandem(["exec", db.path, "INSERT INTO todos(what) VALUES ('first, which holds the observer')"]).status == 0)
        #expect(holding.wait(timeout: .now() + 5) == .success, "the observer never told of the first commit")
        #expect(try runTandem(["exec", db.path, "INSERT INTO notes(id, title) VALUES ('n', 'just before ours')"]).status == 0)
        writingHere.withLock { $0 = true }
        try db.write { try $0.execute("INSERT INTO todos(what) VALUES ('ours, right after')") }
        writingHere.withLock { $0 = false }
        held.signal()
        try waitUntil(timeout: 5, "the other process's commit to notes is reported (told: \(calls.withLock { $0 }))") {
            calls.withLock { $0.contains { $0.isUnknown || $0.tables.contains("notes") } }
        }
    }
}
