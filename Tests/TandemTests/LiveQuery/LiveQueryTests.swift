import Foundation
import Synchronization
import Testing
@testable import Tandem

@Suite struct LiveQueryTests {
    @Test func emitsInitialValueThenChangesButNoRepeats() async throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: Schema(tables: notesSchema.tables + [TableSchema(name: "other", columns: [.text("x")])]))
        var iterator = db.watch("SELECT count(*) AS n FROM notes").makeAsyncIterator()
        #expect(try await iterator.next(within: 10, "the initial result")?.first?["n"] == .integer(0))
        try db.execute("INSERT INTO other(x) VALUES ('not read by the query')")
        try db.execute("UPDATE notes SET title = 'no rows, same result'")
        try db.execute("INSERT INTO notes(title) VALUES ('a')")
        #expect(try await iterator.next(within: 10, "the insert's result")?.first?["n"] == .integer(1), "an unchanged result was emitted again")
    }

    @Test func observationStopsWhenCancelled() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let results = Mutex<[Int64]>([])
        let observation = try db.observe("SELECT count(*) FROM notes") { result in
            if case .success(let rows) = result { results.withLock { $0.append(rows[0][0].int64Value ?? -1) } }
        }
        let witness = Mutex<[Int64]>([])
        let running = try db.observe("SELECT count(*) AS n FROM notes") { result in
            if case .success(let rows) = result { witness.withLock { $0.append(rows[0][0].int64Value ?? -1) } }
        }
        try waitUntil("the initial result") { results.withLock { $0 } == [0] }
        try db.execute("INSERT INTO notes(title) VALUES ('a')")
        try waitUntil("the new result") { results.withLock { $0 } == [0, 1] }
        observation.cancel()
        try db.execute("INSERT INTO notes(title) VALUES ('b')")
        // A query still running shows the commit: by then the cancelled one has not run again.
        try waitUntil("the running query's result") { witness.withLock { $0 }.last == 2 }
        #expect(results.withLock { $0 } == [0, 1])
        withExtendedLifetime(running) {}
    }

    @Test func errorsInTheSQLEndTheStream() async throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        do {
            try await within(10, "the stream to end with an error") {
                for try await _ in db.watch("SELECT * FROM missing_table") { Issue.record("a result for bad SQL") }
            }
            Issue.record("the stream ended without an error")
        } catch let error as SQLiteError {
            #expect(error.message.contains("no such table: missing_table"))
        }
    }

    @Test func changesNameTablesByTheirSchemaNames() async throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        var changes = try db.changes().makeAsyncIterator()
        try db.execute("INSERT INTO notes(title) VALUES ('a')")
        let change = try #require(try await changes.next(within: 10, "the insert's change"))
        #expect(change.tables == ["notes", "ps_crud"])
        #expect(!change.isUnknown)
    }
}

/// A test that waits for a live result which never comes fails within its bound, naming what it
/// waited for, instead of hanging the run.
@Suite struct BoundedWaitTests {
    @Test func aLiveResultThatNeverComesFailsWithinItsBound() async throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        var iterator = db.watch("SELECT count(*) FROM notes").makeAsyncIterator()
        _ = try await iterator.next(within: 10, "the initial result")
        let start = Date()
        do {
            _ = try await iterator.next(within: 0.5, "a result no commit brings")
            Issue.record("a result came with no commit")
        } catch let failure as TestFailure {
            #expect(failure.description.contains("a result no commit brings"))
        }
        #expect(Date().timeIntervalSince(start) < 5, "the wait ended near its bound")
    }
}
