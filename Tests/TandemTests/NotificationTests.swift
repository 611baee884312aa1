import Foundation
import Synchronization
import Testing
@testable import Tandem

private let twoTables = Schema(tables: notesSchema.tables + [TableSchema(name: "todos", columns: [.text("what")])])

@Suite struct ForeignCommitTests {
    /// The sqlite3 shell commits to `notes` (no stamp, no wake-up), then a Tandem process commits
    /// to `todos` before this process's observer reads: the change to `notes` must still reach it
    /// (as "unknown tables changed"), with no help from the backstop poll.
    @Test func aForeignCommitFollowedByATandemCommitIsReported() throws {
        let dir = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.changePollInterval = 3600  // no backstop poll during the test
        let db = try SharedDatabase(path: dir.path("a.db"), schema: twoTables, configuration: configuration)
        let seen = Mutex<[DatabaseChange]>([])
        let token = try db.addChangeHandler { change in seen.withLock { $0.append(change) } }
        defer { db.removeChangeHandler(token) }
        let shell = try Spawned(executable: "/usr/bin/sqlite3", [db.path, "INSERT INTO notes(id, title) VALUES ('s', 'from the shell')"])
        #expect(try shell.wait() == 0, "\(shell.stderr)")
        #expect(try runTandem(["exec", db.path, "INSERT INTO todos(what) VALUES ('tandem')"]).status == 0)
        try waitUntil(timeout: 5, "a change that covers notes") {
            seen.withLock { $0.contains { $0.isUnknown || $0.tables.contains("notes") } }
        }
    }
}

@Suite struct NoInotifyTests {
    /// Runs `tandem ARGS…` as user nobody; with `exhaustInotify`, after using up every inotify
    /// instance that user may have (so `inotify_init1` fails with EMFILE in `tandem`).
    static func asNobody(_ arguments: [String], exhaustInotify: Bool = false) throws -> Spawned {
        let exhaust = """
            import ctypes, os, sys
            libc = ctypes.CDLL(None, use_errno=True)
            held = []
            while True:
                fd = libc.inotify_init1(0)
                if fd < 0: break
                held.append(fd)
            os.execv(sys.argv[1], sys.argv[1:])
            """
        let command = exhaustInotify ? ["/usr/bin/python3", "-c", exhaust, tandemBinary] : [tandemBinary]
        return try Spawned(executable: "/usr/bin/setpriv",
                           ["--reuid=65534", "--regid=65534", "--clear-groups", "--"] + command + arguments)
    }

    /// With the user's inotify instances used up, `tandem watch` and `tandem app` start anyway,
    /// say once that they poll, and still see other processes' commits (within the backstop interval).
    @Test func watchAndAppFallBackToPolling() throws {
        let dir = try TemporaryDirectory()
        #expect(chown(dir.url.path, 65534, 65534) == 0)
        let schemaFile = dir.path("schema.json")
        try #"{"tables":[{"name":"notes","columns":[{"name":"title","type":"text"}]}]}"#.write(toFile: schemaFile, atomically: true, encoding: .utf8)
        let db = dir.path("a.db"), server = "sqlite:" + dir.path("server.db")
        #expect(try Self.asNobody(["init", db, "--schema", schemaFile]).wait() == 0)

        let watcher = try Self.asNobody(["watch", db, "SELECT count(*) AS n FROM notes", "--json"], exhaustInotify: true)
        try watcher.waitForLine("the initial result") { $0 == #"[{"n":0}]"# }
        let app = try Self.asNobody(["app", db, "--backend", server, "--json"], exhaustInotify: true)
        try app.waitForLine("the polling notice") { $0.contains("polling_for_changes") }
        #expect(try Self.asNobody(["exec", db, "INSERT INTO notes(id, title) VALUES ('p', 'polled')"]).wait() == 0)
        try watcher.waitForLine(timeout: 3, "the new count") { $0 == #"[{"n":1}]"# }
        try app.waitForLine(timeout: 3, "the upload") { $0.contains(#""event":"uploaded""#) }
        #expect(watcher.stderr.contains("inotify is unavailable"), "\(watcher.stderr)")
        #expect(watcher.stderr.components(separatedBy: "inotify is unavailable").count == 2, "said once: \(watcher.stderr)")
        for child in [watcher, app] { child.signal(SIGTERM); #expect(try child.wait() == 0) }
    }
}

@Suite struct StartupRaceTests {
    /// Two apps start together (at one CLOCK_MONOTONIC instant) on two clients of one new
    /// backend; a row written on A as soon as both own sync reaches B, every round.
    @Test func aRowWrittenRightAfterTwoAppsStartReachesTheOtherClient() throws {
        for round in 0..<6 {
            let f = try SyncFixture()
            let startAt = String(nowMicroseconds() + 150_000)
            let apps = try [f.a, f.b].map { db in
                try Spawned(["app", db.path, "--backend", f.backendURL, "--json"], environment: ["TANDEM_START_AT_US": startAt])
            }
            for app in apps { try app.waitForLine("became_owner") { $0.contains("became_owner") } }
            #expect(try runTandem(["exec", f.a.path, "INSERT INTO notes(id, title) VALUES ('x', ?)", "round \(round)"]).status == 0)
            try waitUntil(timeout: 5, "round \(round): the row on B") { try count(f.b, "SELECT count(*) FROM notes") == 1 }
            for app in apps { app.signal(SIGTERM); #expect(try app.wait() == 0) }
        }
    }
}

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

@Suite struct ExplicitChangeTests {
    /// `notifyChanged(tables:)` reaches the observers of other connections (another process's,
    /// here a second instance with its own observer) with exactly the tables it names, though no
    /// row changed, and with no help from the backstop poll.
    @Test func notifyChangedReachesOtherObservers() throws {
        let dir = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.changePollInterval = 3600
        let db = try SharedDatabase(path: dir.path("a.db"), schema: twoTables, configuration: configuration)
        let other = try SharedDatabase(path: db.path, configuration: configuration)
        let seen = Mutex<[DatabaseChange]>([])
        let token = try other.addChangeHandler { change in seen.withLock { $0.append(change) } }
        defer { other.removeChangeHandler(token) }
        try db.notifyChanged(tables: ["notes"])
        try waitUntil(timeout: 2, "the explicit change") { !seen.withLock { $0 }.isEmpty }
        #expect(seen.withLock { $0 }.map(\.tables) == [["notes"]])
        try db.notifyChanged(tables: [])
        try waitUntil(timeout: 2, "the explicit unknown change") { seen.withLock { $0 }.count == 2 }
        #expect(seen.withLock { $0 }.last?.isUnknown == true)
    }
}
