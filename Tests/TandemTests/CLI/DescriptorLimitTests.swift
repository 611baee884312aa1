import Foundation
import Testing
@testable import Tandem

/// Few file descriptors (`ulimit -n`, or most of them in use): no command crashes; each works or
/// fails naming the limit (EMFILE); `--version` and `--help` work whatever the limit.
@Suite struct DescriptorLimitTests {
    /// `tandem ARGS…` (or another binary's) under `ulimit -n limit`.
    func run(limit: Int, _ arguments: [String], binary: String = tandemBinary) throws -> (status: Int32, stdout: String, stderr: String) {
        let spawned = try Spawned(
            executable: "/bin/sh", ["-c", #"ulimit -n "$0" && exec "$@""#, String(limit), binary] + arguments,
            environment: ["SWIFT_BACKTRACE": "enable=no"])
        let status = try spawned.wait()
        return (status, spawned.output.joined(separator: "\n"), spawned.stderr)
    }

    @Test func everyCommandAtEveryLowLimitWorksOrNamesTheLimit() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'x')")
        let schema = try dir.schemaFile()
        let payload = dir.path("p.json")
        try Data(#"[{"id":"b","title":"y"}]"#.utf8).write(to: URL(fileURLWithPath: payload))
        var fresh = 0
        func commands() -> [[String]] {
            fresh += 1
            return [
                ["--version"], ["query", "--help"], ["query", db.path, "SELECT count(*) FROM notes"],
                ["exec", db.path, "UPDATE notes SET done = 1"], ["check", db.path], ["status", db.path], ["schema", db.path, "--swift"],
                ["init", dir.path("new\(fresh).db"), "--schema", schema], ["backup", db.path, dir.path("copy\(fresh).db")],
                ["import", db.path, "notes", payload], ["export", db.path, "notes"],
            ]
        }
        for limit in [4, 5, 6, 7, 8, 9, 10, 12, 16, 32, 64, 68, 72, 4096] {
            for command in commands() {
                let result = try run(limit: limit, command)
                let what = "ulimit -n \(limit): tandem \(command.joined(separator: " "))"
                #expect(
                    ![128 + SIGILL, 128 + SIGABRT, 128 + SIGSEGV, 128 + SIGTRAP].contains(result.status) && !result.stderr.contains("Fatal error"),
                    "\(what) crashed (\(result.status)): \(result.stderr)")
                if command.contains("--version") || command.contains("--help") || limit == 4096 {
                    #expect(result.status == 0, "\(what): \(result.stderr)")
                } else if result.status != 0 {
                    #expect(result.status == 1 && result.stderr.contains("EMFILE") && result.stderr.contains("ulimit -n"), "\(what): \(result.stderr)")
                }
            }
        }
    }

    /// Most descriptors in use when the database is opened: wherever opening or writing runs
    /// out (SQLite's open, its WAL, the lock or wake-up files), the error names the limit.
    @Test func runningOutWhileOpeningNamesTheLimit() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        _ = try SharedDatabase(path: path, schema: notesSchema)
        var failures = 0
        for left in 0...16 {
            let result = try run(limit: 256, ["scarce-descriptors", path, "--left", String(left)], binary: testSupportBinary)
            #expect(result.status == 0 || result.status == 1, "\(left) left: crashed (\(result.status)): \(result.stderr)")
            if result.status == 0 {
                #expect(result.stdout == "ok")
            } else {
                failures += 1
                #expect(
                    result.stderr.contains("EMFILE: the process reached its limit of") && result.stderr.contains("open files; raise it with ulimit -n"),
                    "\(left) left: \(result.stderr)")
            }
        }
        #expect(failures > 0, "no count of descriptors left was too few")
        #expect(try SharedDatabase(path: path).integrityCheck() == "ok")
    }
}
