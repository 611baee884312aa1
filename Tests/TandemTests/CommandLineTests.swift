import Foundation
import Testing
@testable import TandemCLI

@Suite struct ArgumentsTests {
    @Test func parsesPositionalsFlagsAndOptions() throws {
        let args = try Arguments(["db", "--json", "--schema", "s.json", "SELECT ?", "-5", "--", "--literal"],
                                 flags: ["json"], options: ["schema"])
        #expect(args.positionals == ["db", "SELECT ?", "-5", "--literal"])
        #expect(args.has("json"))
        #expect(args.options["schema"] == "s.json")
        #expect(try Arguments(["--schema=x"], options: ["schema"]).options["schema"] == "x")
    }

    @Test func rejectsUnknownOptionsMissingValuesAndBadNumbers() {
        #expect(throws: Arguments.UsageError(message: "unknown option '--jsn'")) { try Arguments(["--jsn"], flags: ["json"]) }
        #expect(throws: Arguments.UsageError(message: "--schema needs a value")) { try Arguments(["--schema"], options: ["schema"]) }
        #expect(throws: Arguments.UsageError(message: "--json takes no value")) { try Arguments(["--json=1"], flags: ["json"]) }
        #expect(throws: Arguments.UsageError(message: "--writers takes a whole number from 1 to 8, not 'x'")) {
            try Arguments(["--writers", "x"], options: ["writers"]).integer("writers", default: 1, range: 1...8)
        }
        #expect(throws: Arguments.UsageError(message: "missing SQL")) { try Arguments(["db"]).require(["DB", "SQL"]) }
    }

    @Test func bindsNumbersAsNumbersAndTheRestAsText() {
        #expect(bindValue("42") == .integer(42))
        #expect(bindValue("-3") == .integer(-3))
        #expect(bindValue("2.5") == .real(2.5))
        #expect(bindValue("abc") == .text("abc"))
        #expect(bindValue("1e3") == .text("1e3"))
    }
}

@Suite struct CommandLineErrorTests {
    @Test func everyCommandHasHelp() throws {
        for command in ["init", "exec", "query", "watch", "changes", "crud", "status", "app", "sync", "stress", "demo"] {
            let result = try runTandem([command, "--help"])
            #expect(result.status == 0, "\(command)")
            #expect(result.stdout.hasPrefix("Usage: tandem \(command)"), "\(command): \(result.stdout.prefix(60))")
        }
        let overview = try runTandem(["--help"])
        #expect(overview.stdout.contains("stress") && !overview.stdout.contains("stress-writer"))
    }

    @Test func errorsGoToStderrWithoutStackTraces() throws {
        let dir = try TemporaryDirectory()
        let schema = dir.path("schema.json")
        try Data(#"{"tables":[{"name":"notes","columns":[{"name":"title","type":"text"}]}]}"#.utf8).write(to: URL(fileURLWithPath: schema))
        let db = dir.path("a.db")
        #expect(try runTandem(["init", db, "--schema", schema]).status == 0)

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
        #expect(try runTandem(["query", db, "SELECT count(*) AS n FROM ps_crud", "--json"]).stdout == #"[{"n":0}]"#)
    }

    @Test func demoShowsRowsFlowingBetweenClients() throws {
        let result = try runTandem(["demo", "--seconds", "1", "--writers", "2"], timeout: 90)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("(in sync)"))
        #expect(result.stdout.contains("CRUD entries still queued on A: 0"))
    }
}
