import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// Long commands redraw a progress line on a terminal, and print nothing more off one or with
/// `--json`.
@Suite struct ProgressLineTests {
    @Test func theLineSaysWhatIsDoneItsRateTheTimeAndTheTimeLeft() {
        #expect(
            ProgressLine.text(label: "import notes", unit: .rows, count: 412_000, elapsed: .seconds(3), fraction: 0.4)
                == "import notes: 412,000 rows, 137,333 rows/s, 3.0 s, 40 %, about 4.5 s left")
        #expect(
            ProgressLine.text(label: "export notes", unit: .rows, count: 5, elapsed: .milliseconds(500), fraction: nil)
                == "export notes: 5 rows, 10 rows/s, 0.5 s")
        #expect(
            ProgressLine.text(label: "stress", unit: .transactions, count: 1_234_567, elapsed: .seconds(75), fraction: 1)
                == "stress: 1,234,567 transactions, 16,461 tx/s, 1 min 15 s, 100 %")
        #expect(
            ProgressLine.text(label: "backup", unit: .bytes, count: 12_345_678, elapsed: .seconds(2), fraction: 0.25)
                == "backup: 12.3 MB, 6.2 MB/s, 2.0 s, 25 %, about 6.0 s left")
    }

    @Test func commandsDrawItOnATerminalOnly() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("p.db"), schema: notesSchema)
        let payload = dir.path("p.ndjson")
        try (0..<150_000).map { #"{"id":"n\#($0)","title":"note \#($0)"}"# }.joined(separator: "\n")
            .write(toFile: payload, atomically: true, encoding: .utf8)
        // Off a terminal (a pipe, here): nothing on standard error.
        let imported = try tandem(["import", db.path, "notes", payload, "--ndjson"])
        #expect(imported.status == 0 && imported.stderr.isEmpty, "\(imported.stderr)")
        let exported = try tandem(["export", db.path, "notes"])
        #expect(exported.status == 0 && exported.stderr.isEmpty)
        let backup = try tandem(["backup", db.path, dir.path("copy.db")])
        #expect(backup.status == 0 && backup.stderr.isEmpty)
        // On a terminal (script(1) gives the command one), the line is redrawn in place, then
        // cleared before the summary; --json prints the summary alone.
        let onTerminal = try runScript("'\(tandemBinary)' import '\(db.path)' notes '\(payload)' --ndjson")
        #expect(onTerminal.contains("\rimport notes: ") && onTerminal.contains(" rows/s, "), "\(onTerminal.debugDescription)")
        #expect(onTerminal.contains("\r\u{1B}[Knotes: 0 inserted, 0 updated, 0 deleted, 150000 unchanged"), "\(onTerminal.debugDescription)")
        let quiet = try runScript("'\(tandemBinary)' import '\(db.path)' notes '\(payload)' --ndjson --json")
        #expect(!quiet.contains("rows/s") && quiet.hasPrefix(#"{"notes":"#), "\(quiet.debugDescription)")
    }

    /// The output of `command` run on a terminal of its own.
    func runScript(_ command: String) throws -> String {
        let script = try Spawned(executable: "/usr/bin/script", ["-q", "-e", "-c", command, "/dev/null"])
        #expect(try script.wait() == 0, "\(command): \(script.stderr)")
        return script.output.joined(separator: "\n")
    }
}
