import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// A command run inside the test process (``tandem(_:input:timeout:)``) says and does what the
/// same command says and does as a process, so that tests of what commands print need not
/// start one each.
@Suite struct CapturedCommandTests {
    /// The same commands, in order, on two copies of a file: one run as processes, one inside
    /// this one. Every exit status, output and error reads alike (the paths told apart), and the
    /// two files end with the same rows.
    @Test func aCommandInsideThisProcessAnswersAsItsProcessDoes() throws {
        let dir = try TemporaryDirectory()
        let schema = dir.path("schema.json")
        try #"{"tables":[{"name":"notes","columns":[{"name":"title","type":"text"},{"name":"n","type":"integer"},{"name":"r","type":"real"}]}]}"#
            .write(toFile: schema, atomically: true, encoding: .utf8)
        let payload = dir.path("rows.ndjson")
        let samples = adversarialValues.enumerated().map { index, value in
            #"{"id":"s\#(index)","title":\#(value.jsonText),"n":\#(index),"r":\#(index % 2 == 0 ? "2.0" : "-0.0")}"#
        }
        try samples.joined(separator: "\n").write(toFile: payload, atomically: true, encoding: .utf8)
        let steps: [[String]] = [
            ["init", "DB", "--schema", schema], ["import", "DB", "notes", payload, "--ndjson"],
            ["exec", "DB", "UPDATE notes SET title = 'x' || title WHERE n % 3 = 0"], ["exec", "DB", "INSERT INTO nope VALUES (1)"],
            ["query", "DB", "SELECT id, title, n, r FROM notes ORDER BY n", "--json"],
            ["query", "DB", "SELECT id, title FROM notes ORDER BY n", "--mode", "tsv"], ["query", "DB", "SELECT * FROM notes", "--mode", "nope"],
            ["export", "DB", "notes"], ["schema", "DB"], ["check", "DB"], ["status", "DB", "--json"], ["crud", "DB", "--limit", "3"],
            ["exec", "DB", "SELECT 1", "--busy-timeout", "soon"], ["exec", "DB", "SELECT 1", "--busy-timeout", "2s"], ["query", "DB"],
            ["nope"], ["--version"], ["exec", "--help"], ["query", dir.path("missing.db"), "SELECT 1"],
        ]
        let asProcess = dir.path("process.db"), inside = dir.path("inside.db")
        for step in steps {
            let process = try runTandem(step.map { $0 == "DB" ? asProcess : $0 })
            let here = try tandem(step.map { $0 == "DB" ? inside : $0 })
            let told = { (text: String) in text.replacingOccurrences(of: asProcess, with: "DB").replacingOccurrences(of: inside, with: "DB") }
            #expect(here.status == process.status, "\(step): \(here.stderr) against \(process.stderr)")
            #expect(told(here.stdout) == told(process.stdout), "\(step)")
            #expect(told(here.stderr) == told(process.stderr), "\(step)")
        }
        #expect(try tandem(["query", inside, "SELECT * FROM notes ORDER BY n"]).stdout == runTandem(["query", asProcess, "SELECT * FROM notes ORDER BY n"]).stdout)
    }

    /// Standard input is the given bytes, for `-` and for SQL missing from the command line.
    @Test func standardInputIsTheGivenBytes() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("in.db"), schema: notesSchema)
        #expect(try tandem(["exec", db.path, "-"], input: "INSERT INTO notes(id, title) VALUES ('a', 'from stdin')").status == 0)
        #expect(try tandem(["query", db.path, "--json"], input: "SELECT title FROM notes").stdout == #"[{"title":"from stdin"}]"#)
        #expect(try tandem(["import", db.path, "notes", "-"], input: #"[{"id":"b","title":"piped"}]"#).status == 0)
        #expect(try count(db, "SELECT count(*) FROM notes") == 2)
        let empty = try tandem(["query", db.path])
        #expect(empty.status == 2 && empty.stderr.contains("standard input was empty"), "\(empty.stderr)")
    }

    /// A command that ends its own process (on a signal, a replaced file) or hands its streams to
    /// processes of its own is refused inside another program, which it would end.
    @Test func aCommandThatNeedsItsOwnProcessIsRefused() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("own.db"), schema: notesSchema)
        defer { db.close() }
        for arguments in [["changes", db.path], ["watch", db.path, "SELECT 1"], ["app", db.path], ["run", db.path, "--", "true"], ["stress", db.path], ["demo"]] {
            let refused = try tandem(arguments)
            #expect(refused.status == 2 && refused.stderr.contains("runs as a process of its own"), "\(arguments): \(refused.stderr)")
        }
        #expect(try count(db, "SELECT count(*) FROM notes") == 0, "the test process is still here, its database open")
    }

    /// The databases a command opened are closed when it ends, and those of the program stay open.
    @Test func aCommandClosesWhatItOpenedAndNothingElse() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("own.db"), schema: notesSchema)
        #expect(try tandem(["exec", db.path, "INSERT INTO notes(id, title) VALUES ('a', 'x')"]).status == 0)
        #expect(SharedDatabase.isOpenInThisProcess(db.path))
        try db.execute("INSERT INTO notes(id, title) VALUES ('b', 'still open')")
        db.close()
        #expect(!SharedDatabase.isOpenInThisProcess(db.path), "the command left its database open")
    }
}
