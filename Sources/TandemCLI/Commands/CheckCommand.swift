import Foundation
import Tandem

enum CheckCommand {
    static let command = CommandLineTool.Command(
        name: "check", summary: "check a database's pages and Tandem's layout, changing nothing",
        usage: """
            Usage: tandem check DB [--full] [--json]

            Checks DB on a read-only connection, changing nothing: SQLite's page check (PRAGMA
            quick_check; with --full PRAGMA integrity_check, slower, which also compares every
            index with its table), and Tandem's layout against the stored schema: each declared
            table's view, INSTEAD OF triggers, data table and indexes, Tandem's own tables and
            counters, and the stored schema itself.

            Prints "ok" and exits 0 when all is well; otherwise prints each problem found and exits
            1. `tandem init DB --schema FILE` repairs the problems marked repairable. --json prints
            {"ok":…,"findings":[{"problem":…,"repairable":…}]}.

            Example: tandem check app.db --full

            """, syntax: Arguments.Syntax(flags: ["json", "full"]), hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"])
        let path = args.positionals[0]
        if !FileManager.default.fileExists(atPath: path) {
            throw TandemError.cannotOpen(path: path, reason: "the file does not exist")
        }
        let findings = try SharedDatabase.check(path: path, full: args.has("full"))
        if args.has("json") {
            let items = findings.map { finding in
                Output.object([("problem", Output.jsonString(CommandHints.say(finding.problem, remedy: finding.remedy))), ("repairable", String(finding.isRepairable))])
            }
            Output.write(Output.object([("ok", String(findings.isEmpty)), ("findings", "[" + items.joined(separator: ",") + "]")]) + "\n")
        } else if findings.isEmpty {
            Output.write("ok\n")
        } else {
            for finding in findings {
                Output.write(
                    Output.escapingControlCharactersInMessage(CommandHints.say(finding.problem, remedy: finding.remedy))
                        + (finding.isRepairable ? " (repairable by `tandem init`)" : "") + "\n")
            }
        }
        if !findings.isEmpty {
            Output.error("tandem check: \(findings.count) problem(s) found in '\(path)'\n")
        }
        return findings.isEmpty ? 0 : 1
    }
}
