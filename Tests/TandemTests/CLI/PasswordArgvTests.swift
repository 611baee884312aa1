import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// A backend password never stays where every local user can read it: the command line of a
/// running `tandem` (`ps`, `/proc/PID/cmdline`) no longer shows it once read, with a warning;
/// the URL can come from a file or the environment instead.
@Suite struct PasswordArgvTests {
    static func commandLine(of pid: pid_t) -> String {
        String(decoding: FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data(), as: UTF8.self)
            .replacingOccurrences(of: "\0", with: " ")
    }

    /// `tandem app` with a password in `--backend`: its /proc/PID/cmdline shows the URL without
    /// it while it runs (an unreachable server keeps it running locally), and it warns.
    @Test func aRunningAppShowsNoPasswordInItsCommandLine() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        #expect(try runTandem(["init", path, "--schema", try dir.schemaFile()]).status == 0)
        for url in ["postgres://tandem:s3cretPW@127.0.0.1:1/none", "host=127.0.0.1 port=1 dbname=none password=s3cretPW"] {
            let app = try Spawned(["app", path, "--backend", url])
            try waitUntil(timeout: 10, "the password to leave /proc/\(app.pid)/cmdline: \(Self.commandLine(of: app.pid))") {
                // The child's own command line (not the test's before exec), without the password.
                let shown = Self.commandLine(of: app.pid)
                return shown.contains("app \(path) --backend ") && !shown.contains("s3cretPW")
            }
            try waitUntil(timeout: 10, "the warning on stderr: \(app.stderr)") { app.stderr.contains("warning: a password on the command line") }
            // Running locally means its signal handling is in place: SIGTERM then stops it cleanly.
            try waitUntil(timeout: 30, "the app to run locally: \(app.stderr)") { app.stderr.contains("running locally") }
            #expect(app.isRunning)
            let shown = Self.commandLine(of: app.pid)
            #expect(shown.contains("app \(path) --backend "), "\(shown)")
            #expect(shown.contains(url.replacingOccurrences(of: "s3cretPW", with: "********")), "only the password is hidden: \(shown)")
            app.signal(SIGTERM)
            #expect(try app.wait() == 0)
            #expect(!app.stderr.contains("s3cretPW"))
        }
    }

    /// The URL from `--backend-file` or `TANDEM_BACKEND_URL`, for `sync`, `app` and `backend`,
    /// with no warning; missing everywhere, a usage error naming the three ways.
    @Test func theURLComesFromAFileOrTheEnvironment() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        #expect(try runTandem(["init", path, "--schema", try dir.schemaFile()]).status == 0)
        #expect(try runTandem(["exec", path, "INSERT INTO notes(id, title) VALUES ('a', 'x')"]).status == 0)
        let url = "sqlite:" + dir.path("server.db")
        let file = dir.path("backend.url")
        try Data((url + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let fromFile = try runTandem(["sync", path, "--backend-file", file])
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        #expect(!fromFile.stderr.contains("warning"))
        #expect(try EmbeddedBackend(path: dir.path("server.db")).rows().contains { $0.id == "a" })
        let fromEnvironment = try runTandem(["sync", path], environment: ["TANDEM_BACKEND_URL": url])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")
        let missing = try runTandem(["sync", path], environment: ["TANDEM_BACKEND_URL": ""])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("missing --backend URL (or --backend-file FILE, or TANDEM_BACKEND_URL)"), "\(missing.stderr)")
        let compact = try runTandem(["backend", "compact"], environment: ["TANDEM_BACKEND_URL": "postgres://tandem:s3cretPW@127.0.0.1:1/none"])
        #expect(compact.status == 1)
        #expect(compact.stderr.contains("cannot connect to postgres://tandem:***@127.0.0.1:1/none"), "\(compact.stderr)")
    }

    /// The words of a command line that are backend URLs, whatever the command and option order.
    @Test func backendURLsAreFoundWhereverTheyStand() {
        let cases: [([String], [Int])] = [
            (["app", "a.db", "--backend", "U"], [3]),
            (["sync", "--json", "--backend=U", "a.db"], [2]),
            (["backend", "setup", "U", "--schema", "s.json"], [2]),
            (["backend", "setup", "--schema", "s.json", "U"], [4]),
            (["backend", "grant", "--role", "r", "U", "--scope", "v"], [4]),
            (["backend", "reset", "a.db"], []),
            (["exec", "a.db", "UPDATE t SET password = 'x'"], []),
            (["run", "a.db", "--", "prog", "--backend", "U"], []),
        ]
        for (arguments, positions) in cases {
            #expect(BackendURLSource.urlPositions(in: arguments) == positions, "\(arguments)")
        }
    }

    /// `tandem stress --backend URL` hands its `app` children the URL by the environment: no
    /// child's command line shows it.
    @Test func stressChildrenGetTheURLByTheEnvironment() throws {
        let dir = try TemporaryDirectory()
        let url = "sqlite:" + dir.path("MARKER-server.db")
        let stress = try Spawned(["stress", dir.path("s.db"), "--writers", "2", "--transactions", "3000", "--backend", url])
        var seen: [String] = []
        try waitUntil(timeout: 60, "an app child of tandem stress (pid \(stress.pid))") {
            let children = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            for entry in children {
                guard let pid = pid_t(entry), let status = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { continue }
                let fields = String(decoding: status, as: UTF8.self).split(separator: ")").last?.split(separator: " ") ?? []
                guard fields.count > 1, pid_t(fields[1]) == stress.pid else { continue }
                let line = Self.commandLine(of: pid)
                if line.contains(" app ") { seen.append(line) }
            }
            return !seen.isEmpty || !stress.isRunning
        }
        #expect(!seen.isEmpty, "no app child seen")
        for line in seen { #expect(!line.contains("MARKER"), "\(line)") }
        #expect(try stress.wait(timeout: 120) == 0, "\(stress.stderr)")
    }
}
