import Foundation
import Testing
@testable import TandemCLI

@Suite struct CommandLineErrorTests {
    @Test func everyCommandHasHelp() throws {
        for command in ["init", "exec", "query", "watch", "changes", "crud", "status", "app", "sync", "stress", "demo"] {
            let result = try runTandem([command, "--help"])
            #expect(result.status == 0, "\(command)")
            #expect(result.stdout.hasPrefix("Usage: tandem \(command)"), "\(command): \(result.stdout.prefix(60))")
        }
        let overview = try tandem(["--help"])
        #expect(overview.stdout.contains("stress") && !overview.stdout.contains("stress-writer"))
    }

    @Test func errorsGoToStderrWithoutStackTraces() throws {
        let dir = try TemporaryDirectory()
        let schema = dir.path("schema.json")
        try Data(#"{"tables":[{"name":"notes","columns":[{"name":"title","type":"text"}]}]}"#.utf8).write(to: URL(fileURLWithPath: schema))
        let db = dir.path("a.db")
        #expect(try tandem(["init", db, "--schema", schema]).status == 0)

        let cases: [([String], Int32, String)] = [
            (["nosuch"], 2, "unknown command 'nosuch'"),
            (["exec", db], 2, "missing SQL"),
            (["exec", db, "INSERT INTO nope VALUES (1)"], 1, "no such table: nope"),
            (["exec", db, "INSERT INTO notes(title) VALUES (?)"], 1, "the SQL has 1 parameter(s) but 0 argument(s) were given"),
            (["exec", db, "INSERT INTO notes(title) VALUES ('a'); INSERT INTO notes(title) VALUES (?)"], 1, "needs 1 argument(s) but 0 of the 0 given remain"),
            (["exec", db, "SELECT 1; SELECT 2", "extra"], 1, "1 argument(s) given but the SQL has only 0 parameter(s)"),
            (["exec", dir.path("missing.db"), "SELECT 1"], 1, "does not exist"),
            (["query", db, "SELEC 1"], 1, "syntax error"),
            (["init", db, "--schema", dir.path("none.json")], 1, "cannot read schema file"),
            (["watch", db, "SELECT * FROM nope", "--json"], 1, "no such table: nope"),
            (["stress", db, "--writers", "0"], 2, "--writers takes a whole number"),
        ]
        for (arguments, status, message) in cases {
            let result = try runTandem(arguments)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Backtrace") && !result.stderr.contains("Fatal error"), "\(arguments)")
            #expect(result.stdout.isEmpty || status == 2, "\(arguments) printed to stdout: \(result.stdout)")
        }
        // The failed exec committed nothing.
        #expect(try tandem(["query", db, "SELECT count(*) AS n FROM ps_crud", "--json"]).stdout == #"[{"n":0}]"#)
    }

    @Test func demoShowsRowsFlowingBetweenClients() throws {
        let result = try runTandem(["demo", "--seconds", "1", "--writers", "2"], timeout: 90)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("(in sync)"))
        #expect(result.stdout.contains("CRUD entries still queued on A: 0"))
    }
}
