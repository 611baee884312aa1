import Foundation
import Tandem

enum SearchCommand {
    static let command = CommandLineTool.Command(
        name: "search", summary: "print a table's rows that match a full-text search, best first",
        usage: """
            Usage: tandem search DB TABLE QUERY [--where SQL] [ARG… | --args-json JSON] [--limit N] [--fts5] [--snippet COLUMN] [output options]

            Searches TABLE's search index (its schema declares one: "search": {"columns": […]})
            and prints the matching rows, best first: the table's columns, then search_rank (FTS5's
            bm25, lower is better) and search_snippet. QUERY is words that must all occur, in any
            order; with --fts5 it is FTS5's query syntax (phrases in "…", AND, OR, NOT, NEAR,
            parentheses, prefix*, column: filters), and a mistake is refused naming its character.
            --where keeps the rows an SQL condition over the table's columns selects, each '?'
            taking the next ARG (bound as `tandem exec --help` says, or with exact types from
            --args-json); --snippet COLUMN fills search_snippet with the text around the
            matches of a searched column, each match in [brackets]. To follow a search live, use
            tandem watch DB --search TABLE QUERY.

            \(OutputMode.usage)

            Example: tandem search app.db notes "milk bread" --where "done = ?" 0 --snippet body

            """, syntax: Arguments.Syntax(flags: OutputMode.flags.union(["fts5"]), options: OutputMode.options.union(["where", "limit", "snippet", "args-json"])), hidden: false,
        run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB", "TABLE", "QUERY"], more: true)
        let mode = try OutputMode(args)
        let (table, query) = (args.positionals[1], args.positionals[2])
        let values = try sqlArguments(args, from: 3)
        if args.options["where"] == nil, !values.isEmpty { throw Arguments.UsageError(message: "unexpected argument '\(args.positionals[3])' (ARGs go with --where)") }
        let limit = args.options["limit"] == nil ? nil : try args.integer("limit", default: 0)
        let db = try openDatabase(args.positionals[0], readOnly: true)
        let rows = try db.search(
            table, matching: query, syntax: args.has("fts5") ? .fts5 : .words, where: args.options["where"], values, limit: limit,
            snippetOf: args.options["snippet"])
        let columns = ["id"] + (db.schema.table(named: table)?.columns.map(\.name) ?? []) + ["search_rank", "search_snippet"]
        Output.write(mode.render(ResultSet(columns: columns, rows: rows)))
        return 0
    }
}
