import Foundation
import Testing
@testable import Tandem

@Suite struct ConcurrencyTests {
    /// read-then-write: A holds a write transaction for 1.5 s; B's read-then-update transaction waits and succeeds.
    @Test(arguments: ["tandem", "python"])
    func readThenWriteWaitsForTheHolder(holderKind: String) throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title, done) VALUES ('n', 'x', 0)")
        let holder =
            holderKind == "tandem"
            ? try Spawned(testSupport: ["hold", db.path, "--seconds", "1.5", "UPDATE notes SET title = 'held' WHERE id = 'n'"])
            : try pythonLockHolder(path: db.path, seconds: 1.5, mode: "IMMEDIATE")
        let locked = try holder.waitForLine("locked") { $0 == "locked" }
        let writer = try Spawned(["exec", db.path, "SELECT done FROM notes WHERE id = 'n'; UPDATE notes SET done = done + 1 WHERE id = 'n'"])
        #expect(try writer.wait() == 0, "read-then-write failed: \(writer.stderr)")
        let waited = Double(nowMicroseconds() - locked.at) / 1e6
        #expect(waited > 1.3, "the writer finished \(waited) s after the holder locked")
        try holder.wait()
        #expect(try count(db, "SELECT done FROM notes WHERE id = 'n'") == 1)
    }

    /// lost-update: 4 processes × 40 read-then-write increments = 160.
    @Test func noLostUpdates() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: Schema(tables: [TableSchema(name: "counters", columns: [.integer("n")])]))
        try db.execute("INSERT INTO counters(id, n) VALUES ('c', 0)")
        let startAt = String(nowMicroseconds() + 200_000)
        let writers = try (0..<4).map { _ in try Spawned(testSupport: ["counter", db.path, "--times", "40"], environment: ["TANDEM_START_AT_US": startAt]) }
        for writer in writers { #expect(try writer.wait() == 0, "\(writer.stderr)") }
        #expect(try count(db, "SELECT n FROM counters WHERE id = 'c'") == 160)
        #expect(try count(db, "SELECT count(*) FROM ps_crud") == 161)
    }

    /// A watcher process sees 100 rows written by four concurrent writer processes and settles
    /// on the final count within 1 s of the last commit.
    @Test func watcherSettlesOnFourWritersRows() throws {
        let dir = try TemporaryDirectory()
        let db = try makeStressDatabase(dir.path("a.db"))
        let watcher = try Spawned(["watch", db.path, "SELECT count(*) AS n FROM stress", "--json"])
        try watcher.waitForLine("the initial result") { $0 == #"[{"n":0}]"# }
        let writers = try (0..<4).map { w in try Spawned(["stress-writer", db.path, "--writer", String(w), "--transactions", "25"]) }
        for writer in writers { #expect(try writer.wait() == 0, "\(writer.stderr)") }
        let lastCommit = writers.flatMap { $0.output }.compactMap { Int64($0.split(separator: " ").last ?? "") }.max() ?? 0
        let final = try watcher.waitForLine(timeout: 5, "the final count 100") { $0 == #"[{"n":100}]"# }
        #expect(final.at - lastCommit < 1_000_000, "the watcher printed 100 rows \(final.at - lastCommit) µs after the last commit")
        watcher.signal(SIGTERM)
        #expect(try watcher.wait() == 0)
        #expect(watcher.output.last == #"[{"n":100}]"#)
        let counts = watcher.output.compactMap { Int($0.filter(\.isNumber)) }
        #expect(counts == counts.sorted(), "counts went backwards: \(counts)")

        #expect(try count(db, "SELECT count(*) FROM ps_crud") == 100)
        #expect(try count(db, "SELECT count(DISTINCT data ->> '$.id') FROM ps_crud") == 100)
        #expect(try count(db, "SELECT count(DISTINCT tx_id) FROM ps_crud") == 100)
        #expect(try db.integrityCheck() == "ok")
    }

    /// `tandem watch --json` started before four parallel `tandem exec` writers prints the final
    /// count within 1 s of the last commit.
    @Test func watchSeesFourParallelExecWriters() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let watcher = try Spawned(["watch", db.path, "SELECT count(*) AS n FROM notes", "--json"])
        try watcher.waitForLine("the initial result") { $0 == #"[{"n":0}]"# }
        let insert = "INSERT INTO notes(title) WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM i WHERE k < 25) SELECT ? || k FROM i"
        let writers = try (0..<4).map { w in try Spawned(["exec", db.path, insert, "writer \(w) note "]) }
        for writer in writers { #expect(try writer.wait() == 0, "\(writer.stderr)") }
        let lastCommit = nowMicroseconds()  // every exec has exited, so every commit happened before this
        let final = try watcher.waitForLine(timeout: 5, "the final count 100") { $0 == #"[{"n":100}]"# }
        #expect(final.at - lastCommit < 1_000_000, "printed \(final.at - lastCommit) µs after the last writer exited")
        watcher.signal(SIGTERM)
        #expect(try watcher.wait() == 0)
    }

    /// read-only-process: reads and live queries work; writes throw naming read-only; nothing is queued.
    @Test func readOnlyProcess() async throws {
        let dir = try TemporaryDirectory()
        do { _ = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema) }
        var configuration = Configuration()
        configuration.readOnly = true
        let db = try SharedDatabase(path: dir.path("a.db"), configuration: configuration)
        #expect(try count(db, "SELECT count(*) FROM notes") == 0)
        let message = TandemError.readOnly(path: db.path).description
        #expect(message.contains("opened read-only"))
        #expect(throws: TandemError.readOnly(path: db.path)) { try db.execute("INSERT INTO notes(title) VALUES ('x')") }
        #expect(throws: TandemError.readOnly(path: db.path)) { try db.read { try $0.execute("DELETE FROM ps_crud") } }

        var iterator = db.watch("SELECT count(*) AS n FROM notes").makeAsyncIterator()
        #expect(try await iterator.next(within: 10, "the initial result")?.first?["n"] == .integer(0))
        #expect(try runTandem(["exec", db.path, "INSERT INTO notes(title) VALUES ('from another process')"]).status == 0)
        #expect(try await iterator.next(within: 10, "the other process's insert")?.first?["n"] == .integer(1))
        #expect(try count(db, "SELECT count(*) FROM ps_crud") == 1)
        let cli = try runTandem(["query", db.path, "DELETE FROM notes"])
        #expect(cli.status == 1)
        #expect(cli.stderr.contains("read-only"), "\(cli.stderr)")
    }

    /// rolled-back-silence: a transaction that throws leaves no CRUD entry and wakes no one.
    @Test func rolledBackTransactionNotifiesNoOne() async throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: Schema(tables: notesSchema.tables + [TableSchema(name: "other", columns: [.text("x")])]))
        let changes = try Spawned(["changes", db.path, "--json"])
        try changes.waitForLine("ready") { $0.contains("ready") }
        let watcher = try Spawned(["watch", db.path, "SELECT count(*) AS n FROM notes", "--json"])
        try watcher.waitForLine("the initial result") { $0 == #"[{"n":0}]"# }
        var local = try db.changes().makeAsyncIterator()

        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try db.write { tx in
                try tx.execute("INSERT INTO notes(title) VALUES ('never')")
                throw Abort()
            }
        }
        try db.execute("INSERT INTO other(x) VALUES ('sentinel')")
        let next = try changes.waitForLine("the sentinel commit") { $0.contains("other") || $0.contains("notes") }
        #expect(next.text == #"{"tables":["other"],"unknown":false}"#)
        #expect(try await local.next(within: 10, "the sentinel commit")?.tables == ["other", "ps_crud"])
        #expect(try count(db, "SELECT count(*) FROM ps_crud") == 1)
        #expect(try count(db, "SELECT count(*) FROM ps_crud WHERE data ->> '$.type' = 'notes'") == 0)
        // The next result the watcher shows is the next real commit's: nothing came in between.
        try db.execute("INSERT INTO notes(title) VALUES ('real')")
        try watcher.waitForLine("the real commit's result") { $0 == #"[{"n":1}]"# }
        #expect(watcher.output == [#"[{"n":0}]"#, #"[{"n":1}]"#])
        watcher.signal(SIGTERM)
        changes.signal(SIGTERM)
    }

    /// Commits by the sqlite3 shell (which stamps nothing) reach live queries through the backstop poll.
    @Test func foreignWritersAreNoticedByTheBackstop() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let watcher = try Spawned(["watch", db.path, "SELECT count(*) AS n FROM notes", "--json"])
        try watcher.waitForLine("the initial result") { $0 == #"[{"n":0}]"# }
        let shell = try Spawned(executable: "/usr/bin/sqlite3", [db.path, "INSERT INTO notes(title) VALUES ('shell')"])
        #expect(try shell.wait() == 0)
        try watcher.waitForLine(timeout: 3, "the shell's row") { $0 == #"[{"n":1}]"# }
        watcher.signal(SIGTERM)
    }
}
