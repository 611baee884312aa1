import Foundation
import Synchronization
import Testing
@testable import Tandem

/// Wake-ups of this process's own commits while more of them are under way.
@Suite struct OwnCommitBurstTests {
    /// A burst of this process's own commits (one thread, back to back) calls the wake-up
    /// handlers about once per WAL restart, though the observer often handles the wake-up of
    /// commit k while commit k+1 is between its `stamping` (told to the observer) and its COMMIT.
    /// A wake-up handled in the microseconds between a COMMIT and its confirmation is read (it
    /// cannot tell that commit from another writer's after a failed one): 1 % of the commits is
    /// allowed for those (reading every wake-up of a commit under way called 2–4 % of them).
    @Test func aBurstOfOwnCommitsCallsNoWakeUpHandler() throws {
        let dir = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.changePollInterval = .seconds(3600)  // no backstop poll during the test
        let db = try SharedDatabase(path: dir.path("a.db"), schema: twoTables, configuration: configuration)
        let wakeUps = Atomic<Int>(0)
        let wake = try db.addWakeUpHandler { wakeUps.add(1, ordering: .relaxed) }
        defer { wake.cancel() }
        let barrier = Mutex<Set<String>>([])
        let changes = try db.addImmediateChangeHandler { change in
            if change.tables.contains("notes") { barrier.withLock { $0.insert("notes") } }
        }
        defer { changes.cancel() }
        // Another process's commit, reported: every wake-up before it has been handled.
        func drain(_ name: String) throws {
            barrier.withLock { $0.removeAll() }
            #expect(try runTandem(["exec", db.path, "INSERT INTO notes(id, title) VALUES ('\(name)', 'barrier')"]).status == 0)
            try waitUntil(timeout: 5, "the barrier commit \(name) is reported") { barrier.withLock { $0.contains("notes") } }
        }
        try db.write { try $0.execute("INSERT INTO todos(what) VALUES ('first')") }
        try drain("b0")
        let counter = WALCommitCounter(databasePath: db.path)
        var salts: Set<UInt32> = []
        let before = wakeUps.load(ordering: .relaxed), passedBefore = db.observer.wakeUpsPassedOver
        let commits = 500
        for i in 0..<commits {
            try db.write { try $0.execute("INSERT INTO todos(what) VALUES (?)", ["own \(i)"]) }
            if let salt = counter.position?.salt { salts.insert(salt) }
        }
        try drain("b1")
        let restarts = max(0, salts.count - 1)
        let calls = wakeUps.load(ordering: .relaxed) - before - 1  // less the barrier's own
        let passed = db.observer.wakeUpsPassedOver - passedBefore
        #expect(
            calls <= restarts + commits / 100,
            "\(calls) wake-up handler calls for \(commits) own commits (WAL restarts: \(restarts); wake-ups passed over: \(passed))")
    }

    /// The burst above, step by step. The observer is held (in a change handler on its thread,
    /// at another writer's commit) while this process commits c1; then c2 is told to the
    /// observer as ``Writer/write`` tells it between its `stamping` and its COMMIT (begun where c1
    /// ended). c1's wake-up, handled now, finds the WAL at c1's end: every commit since the last
    /// reading is this process's, so it is passed over, and c2's sequence is still skipped later.
    @Test func aWakeUpHandledWhileTheNextOwnCommitIsUnderWayIsPassedOver() throws {
        let dir = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.changePollInterval = .seconds(3600)
        let db = try SharedDatabase(path: dir.path("a.db"), schema: twoTables, configuration: configuration)
        // Another writer that stays open (a process's exit raises IN_CLOSE_WRITE on the notify file).
        let other = try SharedDatabase(path: db.path, schema: twoTables, configuration: configuration)
        let wakeUps = Atomic<Int>(0)
        let wake = try db.addWakeUpHandler { wakeUps.add(1, ordering: .relaxed) }
        defer { wake.cancel() }
        let armed = Mutex(false)
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let changes = try db.addImmediateChangeHandler { change in
            guard change.tables.contains("notes"),
                armed.withLock({ a in
                    defer { a = false }; return a
                })
            else { return }
            holding.signal()
            release.wait()
        }
        defer { changes.cancel() }
        try db.write { try $0.execute("INSERT INTO todos(what) VALUES ('first')") }
        armed.withLock { $0 = true }
        try other.write { try $0.execute("INSERT INTO notes(id, title) VALUES ('o', 'another writer')") }
        #expect(holding.wait(timeout: .now() + 5) == .success, "the observer never read the other writer's commit")
        let counter = WALCommitCounter(databasePath: db.path)
        try db.write { try $0.execute("INSERT INTO todos(what) VALUES ('c1')") }
        let next = try #require(try db.read { try $0.connection.counter(.sequence) }) + 1
        db.observer.ownCommit(sequence: next, .committing(begin: counter.position))  // c2, under way
        let (wakeUpsBefore, passedBefore) = (wakeUps.load(ordering: .relaxed), db.observer.wakeUpsPassedOver)
        release.signal()
        try waitUntil(timeout: 5, "c1's wake-up handled") {
            wakeUps.load(ordering: .relaxed) > wakeUpsBefore || db.observer.wakeUpsPassedOver > passedBefore
        }
        db.observer.ownCommit(sequence: next, .failed)  // c2 failed: forgotten
        #expect(
            wakeUps.load(ordering: .relaxed) == wakeUpsBefore,
            "c1's wake-up (only this process's commits since the last reading) called the wake-up handlers")
    }
}
