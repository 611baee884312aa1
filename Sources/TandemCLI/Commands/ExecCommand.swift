import Foundation
import Tandem

enum ExecCommand {
    static let command = CommandLineTool.Command(
        name: "exec", summary: "run SQL in one write transaction",
        usage: """
            Usage: tandem exec DB [SQL | - | --file F] [ARG…] [--args-json JSON] [--quiet] [--wait-synced DURATION] [output options]

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
            --wait-synced DURATION (say 30s) then waits, up to DURATION, until the process that owns
            sync (this one never syncs) has uploaded every write committed so far and downloaded
            the server's state since: exits 3 when the backend refused one (set aside: tandem crud
            lists it), 4 when DURATION passed first.

            \(OutputMode.usage)

            Example: tandem exec app.db "INSERT INTO notes(title) VALUES (?) RETURNING id" "Buy milk"

            """, syntax: Arguments.Syntax(flags: OutputMode.flags.union(["quiet"]), options: OutputMode.options.union(["args-json", "file", "wait-synced"])), hidden: false,
        run: run)

    static func run(_ words: [String]) async throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        let wait = try args.options["wait-synced"].map { text in
            guard let seconds = DurationArgument.seconds(text) else {
                throw Arguments.UsageError(message: "--wait-synced takes a duration (500ms, 30s, 5m), not '\(text)'")
            }
            return Duration.seconds(min(seconds, 9e12))
        }
        try args.require(["DB"], more: true)
        let mode = try OutputMode(args)
        let (sql, first) = try SQLInput.resolve(args)
        let values = try sqlArguments(args, from: first)
        let db = try openDatabase(args.positionals[0])
        let result = try commit(sql, values, to: db)
        if !args.has("quiet") {
            if result.resultSets.isEmpty {
                Output.write("\(result.rowsChanged) row\(result.rowsChanged == 1 ? "" : "s") changed\n")
            } else {
                for set in result.resultSets { Output.write(mode.render(set)) }
            }
        }
        guard let wait else { return 0 }
        return try await waitUntilSynced(db, timeout: wait, command: "exec", quiet: args.has("quiet"))
    }

    /// Waits until every write committed so far is synced by the owner, printing "synced";
    /// 3 for a write the backend refused (set aside), 4 when `timeout` passes first.
    static func waitUntilSynced(_ db: SharedDatabase, timeout: Duration, command: String, quiet: Bool = false) async throws -> Int32 {
        do {
            try await db.sync.waitUntilSynced(timeout: timeout)
        } catch let error as TandemError {
            Output.error("tandem \(command): \(Output.escapingControlCharactersInMessage(CommandHints.say(error)))\n")
            if case .uploadRejected = error { return 3 }
            if case .notSynced = error { return 4 }
            throw error
        }
        if !quiet { Output.write("synced\n") }
        return 0
    }

    /// Runs `sql` in one write transaction, on this thread.
    private static func commit(_ sql: String, _ values: [DatabaseValue], to db: SharedDatabase) throws -> ScriptResult {
        try db.write { try $0.run(sql, values) }
    }
}
