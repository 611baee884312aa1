import Foundation
import Testing
@testable import Tandem

/// Restoring a backup: `tandem restore` and a plain copy of an idle file both give exactly the
/// backup's rows, whatever WAL the replaced file left beside it.
@Suite struct RestoreTests {
    static let rows = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT 'r' || x, 'original' FROM c"

    /// `x.db` with `n` rows written by the command line, and its backup `x.bak`.
    static func databaseAndBackup(_ dir: TemporaryDirectory, rows n: Int) throws -> (path: String, backup: String) {
        let path = dir.path("x.db")
        #expect(try tandem(["init", path, "--schema", try dir.schemaFile()]).status == 0)
        let insert = try tandem(["exec", path, "INSERT INTO notes(id, title) " + rows, "\(n)"])
        #expect(insert.status == 0, "\(insert.stderr)")
        let backup = dir.path("x.bak")
        #expect(try tandem(["backup", path, backup]).status == 0)
        return (path, backup)
    }

    /// `SELECT title, count(*)` of `path` through the command line, as `title=count` lines.
    static func titles(_ path: String) throws -> [String] {
        let read = try tandem(["query", path, "SELECT title || '=' || count(*) FROM notes GROUP BY title ORDER BY title", "--mode", "csv", "--no-header"])
        guard read.status == 0 else { throw TestFailure("query \(path): \(read.stderr)") }
        return read.stdout.split(whereSeparator: \.isNewline).map(String.init)
    }

    /// A plain `cp` of an idle backup over an idle database, 50,000 rows: every command then
    /// reads the backup's rows (a stale WAL left beside the file used to be read into it:
    /// "database disk image is malformed", or newer rows kept).
    @Test(arguments: [3, 50_000])
    func aPlainCopyOverAnIdleFileRestores(rows n: Int) throws {
        let dir = try TemporaryDirectory()
        let (path, backup) = try Self.databaseAndBackup(dir, rows: n)
        #expect(try tandem(["exec", path, "UPDATE notes SET title = 'changed'"]).status == 0)
        let cp = try Spawned(executable: "/bin/cp", [backup, path])
        #expect(try cp.wait() == 0, "\(cp.stderr)")
        #expect(try Self.titles(path) == ["original=\(n)"])
        let check = try tandem(["check", path])
        #expect(check.status == 0, "\(check.stdout) \(check.stderr)")
    }

    /// `tandem restore` refuses while a process has the file open (naming it) and changes
    /// nothing; once none has, it replaces the file and removes the stale WAL a killed process
    /// left, and says what the upload queue and cursor mean for sync.
    @Test func restoreRefusesWhileOpenAndReplacesTheSidecars() throws {
        let dir = try TemporaryDirectory()
        let (path, backup) = try Self.databaseAndBackup(dir, rows: 2000)
        let watch = try Spawned(["watch", path, "SELECT count(*) AS n FROM notes", "--mode", "ndjson"])
        try watch.waitForLine("the first result") { $0 == #"[{"n":2000}]"# }
        #expect(try tandem(["exec", path, "UPDATE notes SET title = 'changed'"]).status == 0)
        let refused = try tandem(["restore", backup, path])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("is open in process \(watch.pid) (tandem watch"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("ps_"))
        #expect(try Self.titles(path) == ["changed=2000"], "a refused restore changes nothing")

        // The watcher dies holding the file: its WAL (with the update) stays beside the file.
        kill(watch.pid, SIGKILL)
        _ = try watch.wait()
        for sidecar in ["-wal", "-write.lock", "-notify"] { #expect(FileManager.default.fileExists(atPath: path + sidecar)) }
        let restored = try tandem(["restore", backup, path])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stdout.contains("upload queue: 2000 changes"), "\(restored.stdout)")
        #expect(restored.stdout.contains("download cursor:"), "\(restored.stdout)")
        for sidecar in ["-wal", "-shm", "-write.lock", "-owner.lock", "-notify"] {
            #expect(!FileManager.default.fileExists(atPath: path + sidecar), "the old \(sidecar) is gone")
        }
        #expect(try Self.titles(path) == ["original=2000"])
        #expect(try tandem(["check", path]).status == 0)

        // A missing file is restored too; a file that is not a Tandem database is refused.
        let fresh = dir.path("fresh.db")
        #expect(try tandem(["restore", backup, fresh]).status == 0)
        #expect(try Self.titles(fresh) == ["original=2000"])
        let plain = dir.path("plain.db")
        _ = try sqlite(plain, "CREATE TABLE t(x)")
        let notTandem = try tandem(["restore", plain, path])
        #expect(notTandem.status == 1)
        #expect(notTandem.stderr.contains("has no Tandem schema"), "\(notTandem.stderr)")
        #expect(try Self.titles(path) == ["original=2000"])
        let nowhere = try tandem(["restore", backup, dir.path("missing/x.db")])
        #expect(nowhere.status == 1)
        #expect(nowhere.stderr.contains("does not exist") && !nowhere.stderr.contains("restoring"), "\(nowhere.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).allSatisfy { !$0.contains("restoring") }, "no copy is left")
    }
}

/// The library's restore refuses while the calling process itself has the database open.
@Suite struct RestoreInProcessTests {
    @Test func restoreRefusesADatabaseThisProcessHasOpen() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'x')")
        let backup = dir.path("a.bak")
        try db.backup(to: backup)
        #expect(throws: TandemError.inUse(path: db.path, users: ["this process"])) {
            try SharedDatabase.restore(from: backup, to: db.path)
        }
        db.close()
        try SharedDatabase.restore(from: backup, to: db.path)
        #expect(try count(SharedDatabase(path: db.path), "SELECT count(*) FROM notes") == 1)
    }
}
