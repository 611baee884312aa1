import Foundation
import Tandem

enum ExecCommand {
    static let command = CommandLineTool.Command(
        name: "exec", summary: "run SQL in one write transaction",
        usage: """
            Usage: tandem exec DB [SQL | - | --file F] [ARG…] [--args-json JSON] [--quiet] [output options]

            Runs SQL (one or several ';'-separated statements) in one write transaction; each '?'
            takes the next ARG. SQL comes from the argument, from standard input ('-', or no SQL
            argument with standard input not a terminal), or from --file F. An ARG binds as an
            integer or a real only when it reads back as the same text (42, -7, 2.5); anything else,
            such as 007, +5, 1e3 or 2.50, binds as text. --args-json '["007", 2.0, 3, null]' gives the
            arguments with exact JSON types instead. Use '--' before ARGs that start with '--'.
            Prints the rows of statements that return rows (RETURNING, SELECT) like `query`, else
            "N rows changed" (writes through table views included; a row INSERT OR REPLACE replaced
            counts once, the rows of a savepoint rolled back not at all), unless --quiet. RETURNING
            through a table's view returns the rows as stored (the id a new row was given).
            Exits 0 only if the transaction committed. Writes through table views are queued for upload.

            \(OutputMode.usage)

            Example: tandem exec app.db "INSERT INTO notes(title) VALUES (?) RETURNING id" "Buy milk"

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, flags: OutputMode.flags.union(["quiet"]), options: OutputMode.options.union(["args-json", "file"]))
        try args.require(["DB"], more: true)
        let mode = try OutputMode(args)
        let (sql, first) = try SQLInput.resolve(args)
        let values = try sqlArguments(args, from: first)
        let db = try openDatabase(args.positionals[0])
        let result = try db.write { try $0.run(sql, values) }
        if args.has("quiet") { return 0 }
        if result.resultSets.isEmpty {
            Output.write("\(result.rowsChanged) row\(result.rowsChanged == 1 ? "" : "s") changed\n")
        } else {
            for set in result.resultSets { Output.write(mode.render(set)) }
        }
        return 0
    }
}
