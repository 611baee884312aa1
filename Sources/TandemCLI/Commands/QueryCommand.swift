import Foundation
import Tandem

enum QueryCommand {
    static let command = CommandLineTool.Command(
        name: "query", summary: "print the rows of a query",
        usage: """
            Usage: tandem query DB [SQL | - | --file F] [ARG…] [--args-json JSON] [output options]

            Prints the rows of one statement (a read: SELECT, WITH, PRAGMA queries), column names
            included even when there are no rows; for several statements, or writes, use `tandem
            exec`. SQL comes from the argument, from standard input ('-', or no SQL argument with standard
            input not a terminal), or from --file F; each '?' takes the next ARG (see `tandem exec
            --help` for how ARGs bind, and --args-json). Runs on a read-only connection.

            \(OutputMode.usage)

            Example: tandem query app.db "SELECT title, done FROM notes WHERE done = ?" 0 --mode csv

            """, syntax: Arguments.Syntax(flags: OutputMode.flags, options: OutputMode.options.union(["args-json", "file"])), hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"], more: true)
        let mode = try OutputMode(args)
        let (sql, first) = try SQLInput.resolve(args)
        let values = try sqlArguments(args, from: first)
        let db = try openDatabase(args.positionals[0], readOnly: true)
        let result = try db.read { try $0.run(sql, values) }
        for set in result.resultSets { Output.write(mode.render(set)) }
        return 0
    }
}

enum WatchCommand {
    /// The SQL of the live search `--search TABLE QUERY` asks for (a read on this thread).
    private static func searchSQL(
        _ db: SharedDatabase, table: String, args: Arguments, filterValues: [DatabaseValue], limit: Int?
    ) throws -> (String, [any DatabaseValueConvertible]) {
        try db.read {
            try $0.searchSQL(
                table, matching: args.positionals[1], syntax: args.has("fts5") ? .fts5 : .words, where: args.options["where"], filterValues,
                limit: limit, ranked: false)
        }
    }

    static let command = CommandLineTool.Command(
        name: "watch", summary: "print a query's result now and after every change",
        usage: """
            Usage: tandem watch DB [SQL | - | --file F] [ARG…] [--args-json JSON] [output options]
                   tandem watch DB --search TABLE QUERY [--where SQL] [ARG…] [--fts5] [--limit N] [output options]

            Prints the query's rows now, then again after every committed change (from any process)
            to a table the query reads, until SIGINT or SIGTERM (exit 0). In --mode json and ndjson
            each result is one JSON array per line, flushed at once. If DB is deleted or replaced by
            another file (created again, another file renamed over it), it says so and exits 1; a
            file copied into DB in place (cp over it) is not noticed: restore with tandem restore,
            which refuses while watch runs. With --search, the query is a full-text search of TABLE
            (as tandem search runs it, without search_rank, which moves with every row written):
            its rows are printed again whenever which rows match, their order or their values change.

            \(OutputMode.usage)

            Example: tandem watch app.db "SELECT count(*) AS open FROM notes WHERE done = 0" --mode ndjson

            """, syntax: Arguments.Syntax(flags: OutputMode.flags.union(["fts5"]), options: OutputMode.options.union(["args-json", "file", "search", "where", "limit"])),
        hidden: false, stopsOnSignal: true, run: run)

    static func run(_ words: [String]) async throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"], more: true)
        let mode = try OutputMode(args)
        Signals.onTerminate { exitClosingDatabases(0) }
        let sql: String, values: [any DatabaseValueConvertible]
        let db: SharedDatabase
        if let table = args.options["search"] {
            try args.require(["DB", "QUERY"], more: true)
            let filterValues = try sqlArguments(args, from: 2)
            let limit = args.options["limit"] == nil ? nil : try args.integer("limit", default: 0)
            db = try openDatabase(args.positionals[0], readOnly: true)
            (sql, values) = try searchSQL(db, table: table, args: args, filterValues: filterValues, limit: limit)
        } else {
            let (text, first) = try SQLInput.resolve(args)
            (sql, values) = (text, try sqlArguments(args, from: first))
            db = try openDatabase(args.positionals[0], readOnly: true)
        }
        // The column names, which an empty result does not carry.
        let columns = try await db.read { try $0.run(sql, values) }.resultSets.first?.columns ?? []
        // Results are printed from the live query's own queue: no hop through a task.
        let observation = try db.observe(sql, values) { result in
            switch result {
            case .success(let rows):
                Output.write(mode.watchLine(ResultSet(columns: columns, rows: rows)))
            case .failure(let error):
                if isClosingToExit { return }
                Output.error("tandem watch: error: \(Output.escapingControlCharactersInMessage(CommandHints.say(error)))\n")
                exit(1)
            }
        }
        warnIfPolling(db, command: "watch")
        stopWhenFileIsReplaced(db, command: "watch")
        while true {
            try await Task.sleep(nanoseconds: 3_600_000_000_000)
            withExtendedLifetime(observation) {}
        }
    }
}
