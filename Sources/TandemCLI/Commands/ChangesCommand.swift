import Foundation
import Tandem

enum ChangesCommand {
    static let command = CommandLineTool.Command(
        name: "changes", summary: "print the tables changed by each commit, from any process",
        usage: """
            Usage: tandem changes DB [--json]

            Prints "ready", then one line per noticed commit naming the tables it changed (or
            "unknown" for a writer that does not record its changes, such as the sqlite3 shell),
            until SIGINT or SIGTERM. Commits noticed together share a line; a commit that changed
            only Tandem's own bookkeeping (a sync's cursor, an upload) prints none. --json prints {"tables":[…],"unknown":false} per line. If DB is
            deleted or replaced by another file, it says so and exits 1.

            Example: tandem changes app.db --json

            """, syntax: Arguments.Syntax(flags: ["json"]), hidden: false, stopsOnSignal: true, run: run)

    static func run(_ words: [String]) async throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"])
        Signals.onTerminate { exitClosingDatabases(0) }
        let db = try openDatabase(args.positionals[0], readOnly: true)
        let changes = try db.changes()
        warnIfPolling(db, command: "changes")
        stopWhenFileIsReplaced(db, command: "changes")
        let json = args.has("json")
        Output.write(json ? "{\"ready\":true}\n" : "ready\n")
        for await change in changes {
            let tables = change.userTables.sorted()
            if !change.isUnknown && tables.isEmpty { continue }
            if json {
                Output.write(
                    Output.object([
                        ("tables", Output.json(JSONValue.array(tables.map { .string($0) }))),
                        ("unknown", String(change.isUnknown)),
                    ]) + "\n")
            } else {
                Output.write(change.isUnknown ? "unknown\n" : Output.escapingControlCharacters(tables.joined(separator: " ")) + "\n")
            }
        }
        return 0
    }
}
