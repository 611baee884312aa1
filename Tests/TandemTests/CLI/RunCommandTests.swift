import Foundation
import Testing
@testable import Tandem

/// `tandem run`: a signal sent to it goes to its command, and the write lock stays held until
/// the command has exited; a command that cannot start changes nothing and says why.
@Suite struct RunCommandTests {
    /// True when some process holds Tandem's write lock of `db` (a non-blocking `flock` fails).
    func writeLockIsHeld(_ db: String) throws -> Bool {
        let fd = open(db + "-write.lock", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw TestFailure("cannot open \(db)-write.lock: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return false }
        guard errno == EWOULDBLOCK else { throw TestFailure("flock: \(String(cString: strerror(errno)))") }
        return true
    }

    /// Should a test fail with the command still running: kills it, if `pid` still names it.
    func killIfStillRunning(_ pid: pid_t, marker: String) {
        guard let line = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8), line.contains(marker) else { return }
        kill(pid, SIGKILL)
    }

    @Test(arguments: [SIGTERM, SIGINT, SIGHUP, SIGQUIT])
    func aSignalGoesToTheCommandAndTheLockIsHeldUntilItExits(signal: Int32) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        _ = try SharedDatabase(path: path, schema: notesSchema)
        let fifo = dir.path("go")
        #expect(mkfifo(fifo, 0o600) == 0)
        // The command, on the signal, says so, waits for the test, writes, and exits 7.
        let script =
            #"trap 'echo got-signal; read x < "$1"; sqlite3 "$2" "$3" || exit 9; exit 7' \#(signal); echo started $$; i=0; while [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done"#
        let run = try Spawned(["run", path, "--", "/bin/sh", "-c", script, "sh", fifo, path, "INSERT INTO notes(id, title) VALUES ('late', 'write')"])
        let started = try run.waitForLine("started") { $0.hasPrefix("started ") }.text
        let command = try #require(pid_t(started.dropFirst("started ".count)))
        defer { killIfStillRunning(command, marker: fifo) }
        #expect(try writeLockIsHeld(path))
        kill(run.pid, signal)
        try run.waitForLine("the command's report of signal \(signal)") { $0 == "got-signal" }
        #expect(run.isRunning, "tandem run exited while its command was still running")
        #expect(try writeLockIsHeld(path), "the write lock was released while the command was still running")
        let go = open(fifo, O_WRONLY | O_CLOEXEC)
        #expect(write(go, "x\n", 2) == 2)
        close(go)
        #expect(try run.wait() == 7, "tandem run exits with its command's status; stderr: \(run.stderr)")
        #expect(try !writeLockIsHeld(path))
        let db = try SharedDatabase(path: path)
        #expect(try count(db, "SELECT count(*) FROM notes WHERE id = 'late'") == 1)
    }

    @Test func aCommandKilledByTheForwardedSignalEndsTheRunWithItsStatus() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        _ = try SharedDatabase(path: path, schema: notesSchema)
        let duration = "97.\(Int.random(in: 100_000...999_999))"
        let run = try Spawned(["run", path, "--", "/bin/sh", "-c", "echo $$; exec sleep \(duration)"])
        let child = try #require(pid_t(try run.waitForLine("the command's pid") { Int32($0) != nil }.text))
        defer { killIfStillRunning(child, marker: duration) }
        kill(run.pid, SIGTERM)
        #expect(try run.wait(timeout: 10) == 128 + SIGTERM)
        #expect(kill(child, 0) == -1 && errno == ESRCH, "the command \(child) outlived tandem run")
        #expect(try !writeLockIsHeld(path))
    }

    @Test func aCommandThatCannotStartChangesNothingAndSaysWhy() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        #expect(try tandem(["init", path, "--schema", try dir.schemaFile()]).status == 0)
        let tools = dir.path("tools")
        try FileManager.default.createDirectory(atPath: tools, withIntermediateDirectories: true)
        try Data("plain".utf8).write(to: URL(fileURLWithPath: tools + "/plain"))
        try writeFile([0x67, 0x61, 0x72, 0x00, 0x01], to: tools + "/garbage", mode: 0o755)
        try writeFile(Array("echo no interpreter line\n".utf8), to: tools + "/script", mode: 0o755)
        let cases: [(command: String, reason: String, opens: Bool)] = [
            ("/nonexistent/cmd", "No such file or directory", false), ("./nope", "No such file or directory", false),
            ("no-such-command-\(UUID().uuidString.prefix(6))", "no executable file of that name in PATH", false),
            (tools, "it is a directory", false), (tools + "/plain", "Permission denied", false),
            (tools + "/plain/x", "Not a directory", false),
            // Only exec(2) can tell: the lock is taken, so the lock and shared-memory files change.
            (tools + "/garbage", "Exec format error", true), (tools + "/script", "Exec format error", true),
        ]
        for (command, reason, opens) in cases {
            let before = try listing(dir.url.path)
            let result = try runTandem(in: dir.url.path, ["run", path, "--", command, "arg"])
            #expect(result.status == 1, "\(command): \(result.status)")
            #expect(result.stderr.contains("cannot run '\(command)': \(reason); nothing was changed"), "\(command): \(result.stderr)")
            let after = try listing(dir.url.path)
            #expect(Set(after.keys) == Set(before.keys), "\(command): files \(Set(after.keys).symmetricDifference(before.keys))")
            let kept = opens ? ["a.db", "a.db-wal"] : Array(before.keys)
            #expect(kept.allSatisfy { after[$0] == before[$0] }, "\(command) changed \(kept.filter { after[$0] != before[$0] })")
        }
    }
}
