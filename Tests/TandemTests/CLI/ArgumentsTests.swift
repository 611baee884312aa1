import Foundation
import Testing
@testable import TandemCLI

@Suite struct ArgumentsTests {
    @Test func parsesPositionalsFlagsAndOptions() throws {
        let args = try Arguments(
            ["db", "--json", "--schema", "s.json", "SELECT ?", "-5", "--", "--literal"],
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
