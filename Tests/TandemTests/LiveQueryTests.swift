import Foundation
import Synchronization
import Testing
@testable import Tandem

@Suite struct LiveQueryTests {
    @Test func emitsInitialValueThenChangesButNoRepeats() async throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: Schema(tables: notesSchema.tables + [TableSchema(name: "other", columns: [.text("x")])]))
        var iterator = db.watch("SELECT count(*) AS n FROM notes").makeAsyncIterator()
        #expect(try await iterator.next()?.first?["n"] == .integer(0))
        try db.execute("INSERT INTO other(x) VALUES ('not read by the query')")
        try db.execute("UPDATE notes SET title = 'no rows, same result'")
        try db.execute("INSERT INTO notes(title) VALUES ('a')")
        #expect(try await iterator.next()?.first?["n"] == .integer(1), "an unchanged result was emitted again")
    }

    @Test func observationStopsWhenCancelled() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let results = Mutex<[Int64]>([])
        let observation = try db.observe("SELECT count(*) FROM notes") { result in
            if case .success(let rows) = result { results.withLock { $0.append(rows[0][0].int64Value ?? -1) } }
        }
        try waitUntil("the initial result") { results.withLock { $0 } == [0] }
        try db.execute("INSERT INTO notes(title) VALUES ('a')")
        try waitUntil("the new result") { results.withLock { $0 } == [0, 1] }
        observation.cancel()
        try db.execute("INSERT INTO notes(title) VALUES ('b')")
        // The commit above was delivered in-process synchronously; a cancelled query must not run.
        usleep(100_000)
        #expect(results.withLock { $0 } == [0, 1])
    }

    @Test func errorsInTheSQLEndTheStream() async throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        do {
            for try await _ in db.watch("SELECT * FROM missing_table") { Issue.record("a result for bad SQL") }
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
        let change = try #require(await changes.next())
        #expect(change.tables == ["notes", "ps_crud"])
        #expect(!change.isUnknown)
    }
}

@Suite struct CheckpointTests {
    @Test func truncateCheckpointEmptiesTheWAL() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        for i in 0..<50 { try db.execute("INSERT INTO notes(title) VALUES (?)", ["row \(i)"]) }
        #expect(db.walSize() > 0)
        let result = try db.checkpoint(.truncate)
        #expect(!result.busy)
        #expect(db.walSize() == 0)
        #expect(try count(db, "SELECT count(*) FROM notes") == 50)
    }
}

@Suite struct UnreportedChangeTests {
    /// Changes the update hook does not see (a WITHOUT ROWID table, a truncating DELETE) still
    /// wake live queries in other processes at once, as "unknown tables".
    @Test func changesTheUpdateHookMissesStillWakeOtherProcesses() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("CREATE TABLE plain_kv(k TEXT PRIMARY KEY, v) WITHOUT ROWID")
        let watcher = try Spawned(["watch", db.path, "SELECT count(*) AS n FROM plain_kv", "--json"])
        try watcher.waitForLine("the initial result") { $0 == #"[{"n":0}]"# }
        try db.execute("INSERT INTO plain_kv(k, v) VALUES ('a', 1)")
        // Well within the 1 s backstop poll: the commit itself woke the watcher.
        try watcher.waitForLine(timeout: 0.5, "the new count") { $0 == #"[{"n":1}]"# }
        watcher.signal(SIGTERM)
    }

    /// A transaction that writes a WITHOUT ROWID table and a view-backed table stamps both.
    @Test func aMixedTransactionStampsBothTables() async throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("CREATE TABLE plain_kv(k TEXT PRIMARY KEY, v) WITHOUT ROWID")
        var changes = try db.changes().makeAsyncIterator()
        try db.execute("INSERT INTO plain_kv(k, v) VALUES ('a', 1); INSERT INTO notes(title) VALUES ('n')")
        let change = try #require(await changes.next())
        #expect(change.tables == ["plain_kv", "notes", "ps_crud"])
    }
}
