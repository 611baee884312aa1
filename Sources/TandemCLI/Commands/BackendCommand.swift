import Foundation
import Tandem
import TandemPostgres

enum BackendCommand {
    static let command = CommandLineTool.Command(
        name: "backend", summary: "set up a PostgreSQL backend, or unbind a database from its backend",
        usage: """
            Usage: tandem backend setup URL --schema FILE
                   tandem backend reset DB [--discard-pending]

            setup: creates (or, run again after a schema upgrade, extends) the server side of a
            PostgreSQL backend at URL (postgres://USER@HOST:PORT/DB, any libpq connection string;
            PG* environment variables fill in the rest): a typed table per synced table (an existing
            table of that name is adopted after its columns are checked), the change log and its
            triggers, the applied-upload record, the per-client epochs, NOTIFY for push.
            reset: unbinds DB from its backend so it can sync with another: removes the synced
            tables' rows (saying how many, per table; the backend keeps them), the download cursor
            and the binding; keeps local-only tables. Refused while
            uploads are pending (it says how many) unless --discard-pending, and while a process
            owns sync.

            Example: tandem backend setup postgres://app@db.example.com/app --schema schema.json

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, flags: ["discard-pending"], options: ["schema"])
        guard let action = args.positionals.first else { throw Arguments.UsageError(message: "missing setup or reset") }
        switch action {
        case "setup":
            try args.require(["setup", "URL"])
            guard let schemaPath = args.options["schema"] else { throw Arguments.UsageError(message: "missing --schema FILE") }
            let schema = try Schema(contentsOf: URL(fileURLWithPath: schemaPath))
            let url = try BackendURL(args.positionals[1])
            guard url.scheme == "postgres" else { throw Arguments.UsageError(message: "setup is for postgres:// URLs; an embedded backend (sqlite:) needs none") }
            try PostgresBackend.setup(conninfo: url.location, schema: schema)
            Output.write("set up \(url.name): \(schema.tables.filter { !$0.localOnly }.map(\.name).joined(separator: ", "))\n")
        case "reset":
            try args.require(["reset", "DB"])
            let db = try openDatabase(args.positionals[1])
            let cleared = try db.disconnectAndClear(discardPending: args.has("discard-pending"))
            let rows = cleared.deletedRows.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                + (cleared.deletedWaitingRows > 0 ? ["\(cleared.deletedWaitingRows) for undeclared tables"] : [])
            let total = cleared.deletedRows.values.reduce(cleared.deletedWaitingRows, +)
            Output.write("reset \(db.path): unbound from its backend; deleted \(total) synced row\(total == 1 ? "" : "s") from this file (\(rows.isEmpty ? "no synced tables" : rows.joined(separator: ", "))), which the backend keeps; local-only tables kept\(cleared.discardedUploads > 0 ? "; discarded \(cleared.discardedUploads) queued upload entries" : "")\n")
        default:
            throw Arguments.UsageError(message: "unknown action '\(action)' (setup or reset)")
        }
        return 0
    }
}
