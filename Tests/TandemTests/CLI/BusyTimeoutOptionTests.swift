import Foundation
import Testing
@testable import Tandem

/// `--busy-timeout DURATION` on every command: how long its writes wait for another process's
/// write transaction, named in the error that says it gave up.
@Suite struct BusyTimeoutOptionTests {
    /// A writer holding the lock until the test creates `go` (CMD's own bounded poll).
    private func holder(_ path: String, until go: String) throws -> Spawned {
        let script = "echo running; for i in $(seq 1 600); do [ -e '\(go)' ] && exit 0; sleep 0.05; done; exit 3"
        let run = try Spawned(["run", path, "--", "/bin/sh", "-c", script])
        try run.waitForLine("running") { $0 == "running" }
        return run
    }

    @Test func writersWaitAsLongAsTheOptionSaysAndNameItWhenTheyGiveUp() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db"), go = dir.path("go")
        do { _ = try SharedDatabase(path: path, schema: notesSchema) }
        let run = try holder(path, until: go)
        for spelling in [["--busy-timeout", "300ms"], ["--busy-timeout=0.3"], ["--busy-timeout", "0.3s"]] {
            let start = Date()
            let refused = try tandem(["exec", path, "INSERT INTO notes(title) VALUES ('x')"] + spelling)
            let waited = Date().timeIntervalSince(start)
            #expect(refused.status == 1 && refused.stderr.contains("busy timeout of 300 ms"), "\(spelling): \(refused.stderr)")
            #expect(refused.stderr.contains("--busy-timeout") && !refused.stderr.contains("Configuration"), "\(refused.stderr)")
            #expect(waited < 4.5, "\(spelling): gave up after \(waited) s, not after 0.3 s")
        }
        let file = dir.path("notes.json")
        try #"[{"id":"i1","title":"imported"}]"#.write(toFile: file, atomically: true, encoding: .utf8)
        let importer = try Spawned(["import", path, "notes", file, "--busy-timeout", "60s"])
        let writer = try Spawned(["exec", "--busy-timeout", "1m", path, "INSERT INTO notes(id, title) VALUES ('e1', 'executed')"])
        #expect(FileManager.default.createFile(atPath: go, contents: Data()))
        #expect(try run.wait() == 0)
        #expect(try importer.wait() == 0, "\(importer.stderr)")
        #expect(try writer.wait() == 0, "\(writer.stderr)")
        let db = try SharedDatabase(path: path)
        #expect(try db.fetchAll("SELECT id FROM notes ORDER BY id").compactMap { $0[0].stringValue } == ["e1", "i1"])
    }

    @Test func aValueThatIsNotADurationIsAUsageError() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        do { _ = try SharedDatabase(path: path, schema: notesSchema) }
        for value in ["abc", "-1s", "", "1e999", "nan", "5 s", "10y"] {
            let result = try tandem(["exec", path, "SELECT 1", "--busy-timeout", value])
            #expect(result.status == 2 && result.stderr.contains("--busy-timeout takes a duration"), "'\(value)': \(result.stderr)")
        }
        let missing = try tandem(["exec", path, "SELECT 1", "--busy-timeout"])
        #expect(missing.status == 2 && missing.stderr.contains("--busy-timeout needs a duration"), "\(missing.stderr)")
        // After `--`, the words are CMD's.
        let passed = try runTandem(["run", path, "--", "/bin/echo", "--busy-timeout", "5"])
        #expect(passed.status == 0 && passed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "--busy-timeout 5", "\(passed.stdout) \(passed.stderr)")
    }
}
