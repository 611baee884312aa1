import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

@Suite struct EarlySignalTests {
    /// True once `main` has begun: `tandem`'s first statements set up signal handling and ignore
    /// SIGPIPE (`SigIgn` in /proc). Before `main`, the kernel's default action applies to any program.
    static func mainHasBegun(_ pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigIgn:") }),
            let mask = UInt64(line.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << (UInt64(SIGPIPE) - 1)) != 0
    }

    /// SIGTERM or SIGINT at any moment of the first 100 ms after `main` starts (while the command
    /// is still opening the database) stops `tandem watch` and `tandem app` with exit 0.
    @Test func signalsDuringStartStopCleanly() throws {
        let f = try SyncFixture()
        for round in 0..<16 {
            let arguments =
                round % 2 == 0
                ? ["watch", f.a.path, "SELECT count(*) FROM notes"]
                : ["app", f.a.path, "--backend", f.backendURL]
            let child = try Spawned(arguments)
            try waitUntil("`tandem \(arguments[0])` to start") { Self.mainHasBegun(child.pid) || !child.isRunning }
            usleep(useconds_t((round * 6_700) % 100_000))  // the moment of the signal, spread over 0–100 ms
            child.signal(round % 4 < 2 ? SIGTERM : SIGINT)
            #expect(try child.wait() == 0, "round \(round): `\(child.command)`; stderr: \(child.stderr)")
        }
    }
}
