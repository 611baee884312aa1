import Foundation
import Tandem

enum ExportCommand {
    static let command = CommandLineTool.Command(
        name: "export", summary: "print a table as a JSON array (or NDJSON) that import takes back",
        usage: """
            Usage: tandem export DB TABLE [--where SQL] [--keys snake|camel] [--ndjson]

            Prints the rows of TABLE (those matching the SQL condition of --where) as a JSON array
            of objects, ordered by id, that `tandem import` takes back unchanged: importing it again
            changes nothing and queues nothing. --keys camel writes createdAt for created_at;
            --ndjson writes one object per line instead of an array (import it with --ndjson).
            Rows are written as they are read, from one read transaction (writers go on), in
            bounded memory whatever the table's size. On a terminal a progress line (rows, rows/s,
            time, time left) is redrawn on standard error; off a terminal nothing is.

            Example: tandem export app.db notes --where "done = 0" --keys camel > open.json

            """, syntax: Arguments.Syntax(flags: ["ndjson"], options: ["where", "keys"]), hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB", "TABLE"])
        let keys =
            try args.options["keys"].map { text -> KeyStyle in
                guard let style = KeyStyle(rawValue: text) else { throw Arguments.UsageError(message: "--keys takes snake or camel, not '\(text)'") }
                return style
            } ?? .snake
        let db = try openDatabase(args.positionals[0], readOnly: true)
        let table = args.positionals[1]
        // Rows printed to the terminal show their own progress.
        let line = ProgressLine("export \(table)", unit: .rows, quiet: StandardStreams.isTerminal(STDOUT_FILENO))
        defer { line.finish() }
        try db.exportJSON(
            table: table, where: args.options["where"], keys: keys, format: args.has("ndjson") ? .ndjson : .array,
            progress: { line.update(Int64($0.rows), total: $0.totalRows.map(Int64.init)) }
        ) { Output.write(bytes: $0) }
        return 0
    }
}
