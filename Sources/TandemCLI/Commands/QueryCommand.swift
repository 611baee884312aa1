import Foundation
import Tandem

enum QueryCommand {
    static let command = CommandLineTool.Command(
        name: "query", summary: "print the rows of a query",
        usage: """
            Usage: tandem query DB SQL [ARG…] [--args-json JSON] [--json]

            Prints the rows of one SQL statement as a table, or with --json as one JSON array of
            objects. Each '?' takes the next ARG (see `tandem exec --help` for how ARGs bind, and
            --args-json). Runs on a read-only connection.

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, flags: ["json"], options: ["args-json"])
        try args.require(["DB", "SQL"], more: true)
        let db = try openDatabase(args.positionals[0], readOnly: true)
        let rows = try db.fetchAll(args.positionals[1], try sqlArguments(args, after: 2))
        Output.write(args.has("json") ? Output.json(rows) + "\n" : Output.table(rows))
        return 0
    }
}

enum WatchCommand {
    static let command = CommandLineTool.Command(
        name: "watch", summary: "print a query's result now and after every change",
        usage: """
            Usage: tandem watch DB SQL [ARG…] [--args-json JSON] [--json]

            Prints the query's rows now, then again after every committed change (from any process)
            to a table the query reads, until SIGINT or SIGTERM (exit 0). With --json each result is
            one JSON array per line, flushed at once.

            """, hidden: false, run: run)

    static func run(_ words: [String]) async throws -> Int32 {
        let args = try Arguments(words, flags: ["json"], options: ["args-json"])
        try args.require(["DB", "SQL"], more: true)
        Signals.onTerminate { exit(0) }
        let db = try openDatabase(args.positionals[0], readOnly: true)
        let json = args.has("json")
        // Results are printed from the thread that produced them: no hop through a task.
        let observation = try db.observe(args.positionals[1], try sqlArguments(args, after: 2)) { result in
            switch result {
            case .success(let rows):
                Output.write(json ? Output.json(rows) + "\n" : Output.table(rows) + "\n")
            case .failure(let error):
                Output.error("tandem watch: error: \(error)\n")
                exit(1)
            }
        }
        warnIfPolling(db, command: "watch")
        while true {
            try await Task.sleep(nanoseconds: 3_600_000_000_000)
            withExtendedLifetime(observation) {}
        }
    }
}
