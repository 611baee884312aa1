import Foundation
import Synchronization
import Testing
@testable import Tandem

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
        return try Spawned(
            executable: "/usr/bin/setpriv",
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
