import Foundation
import Synchronization
import Testing
@testable import Tandem

@Suite struct HeadOfLineTests {
    /// A slow live query delays only itself: a fast one reading the same table shows another
    /// process's commit while the slow one is still running.
    @Test func aSlowLiveQueryDelaysOnlyItself() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: twoTables)
        let slowSQL = """
            SELECT count(*) AS n, (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000)
            SELECT count(*) FROM c) AS busy FROM notes
            """
        let slowRuns = Mutex(0), fastCounts = Mutex<[Int64]>([])
        let slow = try db.observe(slowSQL) { _ in slowRuns.withLock { $0 += 1 } }
        let fast = try db.observe("SELECT count(*) FROM notes") { result in
            if case .success(let rows) = result { fastCounts.withLock { $0.append(rows[0][0].int64Value ?? -1) } }
        }
        try waitUntil("both initial results") { slowRuns.withLock { $0 } == 1 && fastCounts.withLock { $0 } == [0] }
        #expect(try runTandem(["exec", db.path, "INSERT INTO notes(title) VALUES ('one')"]).status == 0)
        try waitUntil("the fast query's new result") { fastCounts.withLock { $0 } == [0, 1] }
        #expect(slowRuns.withLock { $0 } == 1, "the fast query waited for the slow one")
        withExtendedLifetime((slow, fast)) {}
    }

    /// A consumer that falls behind loses no change: waiting changes merge into one, so the
    /// first of 300 unconsumed commits still arrives (bounded by the test's time limit).
    @Test(.timeLimit(.minutes(1))) func changesMergeInsteadOfDropping() async throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: twoTables)
        let stream = try db.changes()
        try db.execute("INSERT INTO todos(what) VALUES ('first')")
        for i in 0..<300 { try db.execute("INSERT INTO notes(title) VALUES (?)", ["n\(i)"]) }
        var seen: Set<String> = []
        for await change in stream {
            #expect(!change.isUnknown, "this process's own commits are known")
            seen.formUnion(change.tables)
            if seen.isSuperset(of: ["notes", "todos"]) || change.isUnknown { break }
        }
        #expect(seen.isSuperset(of: ["notes", "todos"]))
    }
}
