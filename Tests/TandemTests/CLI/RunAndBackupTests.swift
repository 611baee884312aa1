import Foundation
import Synchronization
import Testing
@testable import Tandem

@Suite struct RunAndBackupTests {
    /// `tandem run` makes a shell writer wait for a Tandem writer instead of failing with
    /// "database is locked", then wakes a watcher in another process at once.
    @Test func aShellWriterQueuesWithTandemWritersAndWakesWatchers() throws {
        let dir = try TemporaryDirectory()
        let (db, seen, token) = try databaseWithoutPoll(at: dir.path("a.db"), schema: notesSchema)
        defer { token.cancel() }
        let holder = try Spawned(testSupport: ["hold", db.path, "--seconds", "1", "INSERT INTO notes(id, title) VALUES ('held', 'by tandem')"])
        try holder.waitForLine("locked") { $0 == "locked" }
        let bare = try Spawned(executable: "/usr/bin/sqlite3", [db.path, "INSERT INTO notes(id, title) VALUES ('bare', 'x')"])
        #expect(try bare.wait() != 0, "without tandem run the shell races the Tandem writer")
        #expect(bare.stderr.contains("locked"), "\(bare.stderr)")
        let run = try runTandem(["run", db.path, "--", "sqlite3", db.path, "INSERT INTO notes(id, title) VALUES ('queued', 'shell')"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try holder.wait() == 0)
        #expect(try count(db, "SELECT count(*) FROM notes WHERE id IN ('held', 'queued')") == 2)
        try waitUntil(timeout: 2, "the run's wake-up (the backstop poll is off)") { seen.withLock { $0.contains { $0.isUnknown } } }
    }

    /// `tandem run` hands the command its own standard input (`… | tandem run DB -- sqlite3 DB`).
    @Test func runGivesTheCommandItsStandardInput() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("in.db"), schema: notesSchema)
        let script = #"printf "INSERT INTO notes(id, title) VALUES ('piped', 'from stdin');" | "$0" run "$1" -- sqlite3 "$1""#
        let run = try Spawned(executable: "/bin/sh", ["-c", script, tandemBinary, db.path])
        #expect(try run.wait() == 0, "\(run.stderr)")
        #expect(try count(db, "SELECT count(*) FROM notes WHERE id = 'piped'") == 1)
    }

    /// A backup taken while a writer keeps going is consistent; restoring it over the lost file
    /// and syncing applies every queued transaction exactly once.
    @Test func aBackupIsConsistentAndRestoresExactlyOnce() throws {
        let f = try SyncFixture()
        let writer = try Spawned(["exec", f.a.path, "INSERT INTO notes(id, title) SELECT 'w' || value, 'x' FROM generate_series(1, 200)"])
        _ = try writer.wait()
        for i in 0..<5 { try f.a.execute("INSERT INTO notes(id, title) VALUES (?, 'queued')", ["q\(i)"]) }
        let backup = f.dir.path("backup.db")
        let made = try tandem(["backup", f.a.path, backup])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try tandem(["backup", f.a.path, backup]).status == 1, "a backup never overwrites")
        #expect(try SharedDatabase(path: backup).integrityCheck() == "ok")
        #expect(try count(SharedDatabase(path: backup), "SELECT count(*) FROM ps_crud") == (try count(f.a, "SELECT count(*) FROM ps_crud")))
        #expect(try tandem(["sync", f.a.path, "--backend", f.backendURL]).status == 0)
        try f.a.execute("INSERT INTO notes(id, title) VALUES ('after', 'backup')")  // lost with the file
        let path = f.a.path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try FileManager.default.copyItem(atPath: backup, toPath: path)
        #expect(try tandem(["sync", path, "--backend", f.backendURL]).status == 0)
        // Each queued row was applied once: one logged change per row.
        let logged = try Spawned(executable: "/usr/bin/sqlite3", [f.serverPath, "SELECT count(*), count(DISTINCT id) FROM server_changes WHERE id LIKE 'q%'"])
        #expect(try logged.wait() == 0)
        #expect(logged.output == ["5|5"])
    }
}
