import Foundation
import Testing
@testable import Tandem

/// An idle database is its main file: when the last process closes it, the WAL is checkpointed
/// into the main file and the `-wal` and `-shm` are removed, as plain SQLite does, so a copy of
/// the main file alone is the whole database.
@Suite struct IdleFileTests {
    /// The size of `path`, or nil when it does not exist.
    static func size(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
    }

    /// After each command of the command line, with nothing else running, no WAL holds data.
    static func expectIdle(_ path: String, after command: String) {
        #expect((size(path + "-wal") ?? 0) == 0, "\(command) left \(size(path + "-wal") ?? 0) bytes in the -wal")
        #expect(size(path + "-shm") == nil, "\(command) left the -shm")
    }

    @Test func theMainFileHoldsEveryRowOnceTheLastProcessCloses() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("y.db")
        let schema = try dir.schemaFile()
        #expect(try tandem(["init", path, "--schema", schema]).status == 0)
        Self.expectIdle(path, after: "init")
        let many = "INSERT INTO notes(title) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000) SELECT 'n' || x FROM c"  // past a checkpoint threshold
        for sql in ["INSERT INTO notes(id, title) VALUES ('a', 'first')", many, "UPDATE notes SET done = 1 WHERE id = 'a'"] {
            let exec = try tandem(["exec", path, sql])
            #expect(exec.status == 0, "\(exec.stderr)")
            Self.expectIdle(path, after: "exec")
        }
        let payload = dir.path("rows.json")
        try Data(#"[{"id":"i1","title":"imported"}]"#.utf8).write(to: URL(fileURLWithPath: payload))
        #expect(try tandem(["import", path, "notes", payload]).status == 0)
        Self.expectIdle(path, after: "import")
        for command in [["query", path, "SELECT count(*) FROM notes"], ["check", path], ["check", path, "--full"], ["status", path], ["export", path, "notes"]] {
            #expect(try runTandem(command).status == 0)
            Self.expectIdle(path, after: command.prefix(2).joined(separator: " "))
        }

        let copy = dir.path("copy.db")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let read = try tandem(["query", copy, "SELECT count(*) AS n, sum(done) AS d FROM notes", "--mode", "csv", "--no-header"])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "3002,1")
        let queued = try tandem(["query", copy, "SELECT count(*) FROM ps_crud", "--mode", "csv", "--no-header"])
        #expect(queued.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "3003", "the copy keeps the upload queue too: \(queued.stdout) \(queued.stderr)")
        #expect(try tandem(["check", copy]).status == 0)
    }

    /// A close checkpoints the WAL into the main file holding Tandem's write lock, as a writer
    /// does: while another process holds it (a `tandem run` shell, which has no busy timeout and
    /// would meet a closing connection's lock test as "database is locked"), a close leaves the
    /// file alone, and the next close with the lock free makes the main file whole.
    @Test func aCloseWhileAnotherHoldsTheWriteLockLeavesTheFileToTheNextClose() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("l.db")
        try SharedDatabase(path: path, schema: notesSchema).close()
        let db = try SharedDatabase(path: path)
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'in the WAL')")
        let lock = open(path + "-write.lock", O_RDWR | O_CLOEXEC)
        #expect(lock >= 0 && flock(lock, LOCK_EX) == 0)
        let wal = Self.size(path + "-wal") ?? 0
        db.close()
        #expect(Self.size(path + "-wal") == wal && wal > 0, "the close checkpointed while another held the write lock")
        let mainFileAlone = try Connection(path: path, readOnly: true, busyTimeoutMilliseconds: 0, immutable: true, rules: nil)
        #expect(try mainFileAlone.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'ps_data__notes'").int64Value == 1)
        #expect(try mainFileAlone.scalar("SELECT count(*) FROM ps_data__notes").int64Value == 0)
        mainFileAlone.close()
        flock(lock, LOCK_UN)
        close(lock)
        try SharedDatabase(path: path).close()
        Self.expectIdle(path, after: "a close with the write lock free")
        let whole = try Connection(path: path, readOnly: true, busyTimeoutMilliseconds: 0, immutable: true, rules: nil)
        defer { whole.close() }
        #expect(try whole.scalar("SELECT count(*) FROM ps_data__notes WHERE id = 'a'").int64Value == 1)
    }

    /// The last process to stop may be a long-running one stopped by a signal (`watch`,
    /// `changes`, `app`): it leaves the file idle too.
    @Test(arguments: ["watch", "changes", "app"])
    func aLongRunningCommandStoppedLastLeavesTheFileIdle(_ command: String) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("w.db")
        #expect(try tandem(["init", path, "--schema", try dir.schemaFile()]).status == 0)
        let arguments =
            switch command {
            case "watch": ["watch", path, "SELECT count(*) AS n FROM notes", "--mode", "ndjson"]
            case "changes": ["changes", path]
            default: ["app", path, "--backend", "sqlite:" + dir.path("server.db"), "--json"]
            }
        let process = try Spawned(arguments)
        try process.waitForLine("the first output") { $0 == #"[{"n":0}]"# || $0 == "ready" || $0.contains("became_owner") }
        #expect(try tandem(["exec", path, "INSERT INTO notes(id, title) VALUES ('a', 'x')"]).status == 0)
        try process.waitForLine("the write") { $0 == #"[{"n":1}]"# || $0 == "notes" || $0 == "unknown" || $0.contains("uploaded") }
        #expect(Self.size(path + "-shm") != nil, "\(command) still has the file open")
        process.signal(SIGINT)
        #expect(try process.wait(timeout: 10) == 0, "\(process.stderr)")
        #expect(!process.stderr.contains("error"), "\(process.stderr)")
        Self.expectIdle(path, after: "\(command) stopped by SIGINT")
        let copy = dir.path("copy.db")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let read = try tandem(["query", copy, "SELECT count(*) FROM notes", "--mode", "csv", "--no-header"])
        #expect(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "\(read.stdout) \(read.stderr)")
    }

    /// A program that closes its database (or releases it) leaves the file idle too; while
    /// another process has it open, its WAL stays for that process.
    @Test func closingInAProgramLeavesTheFileIdleOnlyWhenLast() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("p.db")
        let db = try SharedDatabase(path: path, schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'x')")
        let other = try SharedDatabase(path: path)
        _ = try other.fetchAll("SELECT * FROM notes")
        db.close()
        #expect(Self.size(path + "-shm") != nil, "another connection still has the file open")
        #expect(throws: TandemError.self) { try db.execute("INSERT INTO notes(id, title) VALUES ('b', 'x')") }
        #expect(throws: TandemError.self) { try db.fetchAll("SELECT * FROM notes") }
        try other.execute("INSERT INTO notes(id, title) VALUES ('c', 'x')")
        other.close()
        Self.expectIdle(path, after: "close")
        #expect(try sqlite(path, "SELECT count(*) FROM ps_data__notes") == ["2"])
    }
}
