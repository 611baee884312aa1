import Foundation
import Synchronization
import Testing
@testable import Tandem

@Suite struct ForeignCommitTests {
    /// The sqlite3 shell commits to `notes` (no stamp, no wake-up), then a Tandem process commits
    /// to `todos` before this process's observer reads: the change to `notes` must still reach it
    /// (as "unknown tables changed"), with no help from the backstop poll.
    @Test func aForeignCommitFollowedByATandemCommitIsReported() throws {
        let dir = try TemporaryDirectory()
        let (db, seen, token) = try databaseWithoutPoll(at: dir.path("a.db"))
        defer { token.cancel() }
        let shell = try Spawned(executable: "/usr/bin/sqlite3", [db.path, "INSERT INTO notes(id, title) VALUES ('s', 'from the shell')"])
        #expect(try shell.wait() == 0, "\(shell.stderr)")
        #expect(try runTandem(["exec", db.path, "INSERT INTO todos(what) VALUES ('tandem')"]).status == 0)
        try waitUntil(timeout: 5, "a change that covers notes") {
            seen.withLock { $0.contains { $0.isUnknown || $0.tables.contains("notes") } }
        }
    }
    /// Every process closed the file, so SQLite builds the WAL index anew and its commit counter
    /// starts again from 0: from the WAL that outlived the processes (they exit without closing),
    /// or with a new WAL (the shell's clean close removed it). A `tandem watch` starts, the sqlite3
    /// shell commits to `notes`, a Tandem process commits to `todos`: the counter is back at the
    /// value the last Tandem commit before recorded, but the watch refreshes at once, not after
    /// the backstop (which sees the stamp of `todos` and would not refresh it at all).
    @Test(arguments: [false, true]) func aForeignCommitAfterEveryProcessClosedTheFileIsReported(walRemoved: Bool) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db"), schemaFile = try dir.schemaFile(twoTables)
        #expect(try runTandem(["init", path, "--schema", schemaFile]).status == 0)
        #expect(try runTandem(["exec", path, "INSERT INTO todos(what) VALUES ('before')"]).status == 0)
        if walRemoved {
            try sqliteShell(path, "SELECT count(*) FROM sqlite_master")
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "the last connection's close removed the WAL")
        }
        let watch = try Spawned(["watch", path, "SELECT count(*) AS n FROM notes", "--mode", "ndjson"])
        try watch.waitForLine("the first result") { $0.contains(#""n":0"#) }
        try sqliteShell(path, "INSERT INTO notes(id, title) VALUES ('s', 'from the shell')")
        #expect(try runTandem(["exec", path, "INSERT INTO todos(what) VALUES ('after')"]).status == 0)
        try watch.waitForLine(timeout: 3, "the shell's row (the watch missed the foreign commit)") { $0.contains(#""n":1"#) }
        watch.signal(SIGTERM)
        #expect(try watch.wait() == 0)
    }

    /// This process commits twice, the sqlite3 shell commits, this process commits again. The
    /// last commit must stamp "unknown tables", although this process knew `ps_state` from its
    /// own commit before (SQLite's data version shows that another connection committed).
    @Test func aForeignCommitBetweenTwoCommitsOfOneProcessIsStamped() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: twoTables)
        for what in ["first", "second"] { try db.write { try $0.execute("INSERT INTO todos(what) VALUES (?)", [what]) } }
        let before = try Self.stamp(db, InternalTables.anyTable)
        let shell = try Spawned(executable: "/usr/bin/sqlite3", [db.path, "INSERT INTO notes(id, title) VALUES ('s', 'from the shell')"])
        #expect(try shell.wait() == 0, "\(shell.stderr)")
        try db.write { try $0.execute("INSERT INTO todos(what) VALUES ('third')") }
        let sequence = try Self.counter(db, .sequence)
        #expect(try Self.stamp(db, InternalTables.anyTable) == sequence, "stamped before: \(String(describing: before))")
        #expect(try Self.stamp(db, InternalTables.dataPrefix + "todos") == sequence)
    }

    /// Commits of this process and of another Tandem process, interleaved, each get the next
    /// sequence number, and each table's stamp is that of the last commit that changed it, however
    /// many commits this process made in a row before.
    @Test func interleavedCommitsOfTwoProcessesGetTheNextSequenceNumberEach() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: twoTables)
        try db.write { try $0.execute("INSERT INTO todos(what) VALUES ('warm')") }
        var expected = try Self.counter(db, .sequence)
        for round in 0..<3 {
            for i in 0..<3 {
                try db.write { try $0.execute("INSERT INTO todos(what) VALUES (?)", ["r\(round)-\(i)"]) }
                expected = expected.map { $0 + 1 }
                #expect(try Self.counter(db, .sequence) == expected)
            }
            #expect(try runTandem(["exec", db.path, "INSERT INTO notes(id, title) VALUES ('n\(round)', 'other process')"]).status == 0)
            expected = expected.map { $0 + 1 }
            #expect(try Self.counter(db, .sequence) == expected)
            #expect(try Self.stamp(db, InternalTables.dataPrefix + "notes") == expected)
        }
        try db.write { try $0.execute("INSERT INTO todos(what) VALUES ('last')") }
        expected = expected.map { $0 + 1 }
        #expect(try Self.counter(db, .sequence) == expected)
        #expect(try Self.stamp(db, InternalTables.dataPrefix + "todos") == expected)
        #expect(try Self.stamp(db, InternalTables.dataPrefix + "notes") == expected.map { $0 - 1 })
    }

    private static func counter(_ db: SharedDatabase, _ counter: Counter) throws -> Int64? {
        try db.read { try $0.scalar("SELECT value FROM \(InternalTables.state) WHERE key = ?", [counter.rawValue]).int64Value }
    }

    private static func stamp(_ db: SharedDatabase, _ table: String) throws -> Int64? {
        try db.read { try $0.scalar("SELECT value FROM \(InternalTables.state) WHERE key = ?", [Counter.changed(table)]).int64Value }
    }
}
