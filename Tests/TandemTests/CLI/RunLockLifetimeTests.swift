import Foundation
import Testing
@testable import Tandem

/// `tandem run` hands CMD a descriptor of the write lock: the lock lives as long as CMD does,
/// even when `tandem run` itself is killed first, so CMD's writes never run unlocked.
@Suite struct RunLockLifetimeTests {
    @Test func theLockOutlivesAKilledTandemRunWhileCmdRuns() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db"), go = dir.path("go")
        do { _ = try SharedDatabase(path: path, schema: notesSchema) }
        // CMD says it runs, then waits for the test's file (its own bounded poll).
        let script = "echo running; for i in $(seq 1 600); do [ -e '\(go)' ] && exit 0; sleep 0.05; done; exit 3"
        let run = try Spawned(["run", path, "--", "/bin/sh", "-c", script])
        try run.waitForLine("running") { $0 == "running" }
        kill(run.pid, SIGKILL)
        var info = siginfo_t()
        #expect(waitid(P_PID, id_t(run.pid), &info, WEXITED | WNOWAIT) == 0 || errno == ECHILD, "tandem run was reaped")
        var configuration = Configuration()
        configuration.busyTimeout = .milliseconds(300)
        let db = try SharedDatabase(path: path, configuration: configuration)
        #expect(throws: SQLiteError.self, "CMD still runs: its lock holds other writers") {
            try db.execute("INSERT INTO notes(title) VALUES ('while CMD runs')")
        }
        #expect(FileManager.default.createFile(atPath: go, contents: Data()))
        try waitUntil(timeout: 30, "CMD to end and release the lock") {
            (try? db.execute("INSERT INTO notes(title) VALUES ('after CMD')")) != nil
        }
        #expect(try db.fetchAll("SELECT title FROM notes").compactMap { $0[0].stringValue } == ["after CMD"])
    }
}
