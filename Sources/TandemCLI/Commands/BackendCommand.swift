import Foundation
import Tandem
import TandemPostgres

enum BackendCommand {
    static let command = CommandLineTool.Command(
        name: "backend", summary: "set up or compact a PostgreSQL backend, or unbind a database from its backend",
        usage: """
            Usage: tandem backend setup [URL] --schema FILE [--retention DURATION] [--contract]
                   tandem backend compact URL
                   tandem backend check URL [--json]
                   tandem backend grant URL --role ROLE [--scope VALUE]… [--write-global]
                   tandem backend revoke URL --role ROLE [--scope VALUE]…
                   tandem backend reset DB [--discard-pending]

            setup: creates (or, run again after a schema upgrade, extends) the server side of a
            PostgreSQL backend at URL (postgres://USER@HOST:PORT/DB, or libpq's host=… dbname=…;
            PG* environment variables fill in the rest): a typed table per synced table (an existing
            table of that name is adopted after its columns are checked), the change log and its
            triggers (TRUNCATE included), the applied-upload record, the per-client epochs, NOTIFY
            for push. Refused, changing nothing: table names starting with tandem_, a table whose
            primary key is not id text alone, NOT NULL columns uploads cannot fill. --retention
            (say 7d, 12h, 30m; 7d unless given, 10m at least) is how long a client may stay away
            before the change log is compacted past it (it then does a full sync, keeping its
            pending uploads); a running client reports its position every minute, idle or not.
            FILE's column renames (renameColumn migrations) are expanded: the new column is added,
            filled from the old one and kept equal to it by a trigger, both synced, so hosts of the
            old and the new schema sync through the server while the rename rolls out; once every
            host runs the new schema, setup with --contract drops the old columns and the trigger.
            Its drops (dropColumn, dropTable migrations) are expanded too: the server keeps
            syncing the column or table for hosts of the old schema (a migrated host stores none
            of it from what it downloads), and --contract drops them. Its type changes
            (changeType) convert the server's column in place by the rule hosts convert with; a
            value that does not convert refuses the setup, naming its row. Its table renames
            (renameTable) rename the server's table with its rows, in one step.
            compact: deletes the change log's entries every client seen within the retention has
            applied, now (apps also do it in the background), and prints how many.
            check: lists each of Tandem's server objects (its tables, the synced tables, its
            sequence and functions) with its owner and the other roles that may use it, and flags
            what a tenant's role could reach that it should not (a privilege PUBLIC holds, a
            function that runs as its owner without a pinned search path, a scoped table without
            row-level security, a role that may create objects in Tandem's schema), with the
            remedy; exits 1 when it flags anything. Roles that may write the global tables are
            noted.
            grant: lets the login role ROLE (which must exist: CREATE ROLE … LOGIN) sync the rows of
            the given scope values of scoped tables (a table's "scope" in the schema), and gives it
            the privileges a client needs; PostgreSQL's row-level security then keeps it, whatever
            it runs, to those rows. Global (unscoped) tables are read-only to the role unless
            --write-global (each grant sets this; its uploads that write them are otherwise
            refused and set aside); grant with --write-global alone for a host role of an unscoped
            fleet. revoke: takes the given values (all without --scope). A client's slice follows
            its role's grants at its next sync. Run both as the role that ran setup, and grant
            again after setup adds tables.
            reset: unbinds DB from its backend so it can sync with another: removes the synced
            tables' rows (saying how many, per table; the backend keeps them), the download cursor
            and the binding; keeps local-only tables. Refused while
            uploads are pending (it says how many) unless --discard-pending, and while a process
            owns sync.

            URL may be left out for --backend-file FILE (the URL is its first line) or the
            environment variable TANDEM_BACKEND_URL, which keep a password off the command line
            (where every local user can read it; one given there is hidden from ps once read, with
            a warning); libpq's PGPASSWORD and ~/.pgpass work too.

            Example: tandem backend setup postgres://app@db.example.com/app --schema schema.json

            """,
        syntax: Arguments.Syntax(
            flags: ["discard-pending", "write-global", "json", "contract"], options: ["schema", "retention", "role", BackendURLSource.fileOption], repeatable: ["scope"]),
        hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        /// The URL after the action, or from --backend-file or TANDEM_BACKEND_URL.
        func backendURL(_ action: String) throws -> BackendURL {
            try args.require([action], more: true)
            if args.positionals.count > 2 { throw Arguments.UsageError(message: "unexpected argument '\(args.positionals[2])'") }
            return try BackendURL(BackendURLSource.url(given: args.positionals.dropFirst().first, args, missing: "missing URL"))
        }
        guard let action = args.positionals.first else { throw Arguments.UsageError(message: "missing setup, compact, check, grant, revoke or reset") }
        switch action {
        case "setup":
            guard let schemaPath = args.options["schema"] else { throw Arguments.UsageError(message: "missing --schema FILE") }
            let schema = try Schema(contentsOf: URL(fileURLWithPath: schemaPath))
            let url = try backendURL("setup")
            guard url.scheme == "postgres" else { throw Arguments.UsageError(message: "setup is for postgres:// URLs; an embedded backend (sqlite:) needs none") }
            let retention = try args.options["retention"].map(duration).map { Duration.seconds(min($0, 9e12)) }
            if let retention, retention < PostgresBackend.minimumRetention {
                throw Arguments.UsageError(
                    message: "--retention \(args.options["retention"] ?? "") is shorter than the least Tandem supports, 10m: running clients report their positions every minute")
            }
            try PostgresBackend.setup(conninfo: url.location, schema: schema, retention: retention, contract: args.has("contract"))
            Output.write("set up \(url.name): \(schema.tables.filter { !$0.localOnly }.map(\.name).joined(separator: ", "))\n")
        case "compact":
            let url = try backendURL("compact")
            guard url.scheme == "postgres" else { throw Arguments.UsageError(message: "compact is for postgres:// URLs; an embedded backend keeps its whole log") }
            let backend = try PostgresBackend(conninfo: url.location)
            let deleted = try backend.compact()
            Output.write("compacted \(url.name): deleted \(deleted) change\(deleted == 1 ? "" : "s") every client has applied\n")
        case "check":
            let url = try backendURL("check")
            guard url.scheme == "postgres" else { throw Arguments.UsageError(message: "check is for postgres:// URLs: an embedded backend is a file only its host opens") }
            return try check(PostgresAudit.check(conninfo: url.location), name: url.name, json: args.has("json"))
        case "grant", "revoke":
            guard let role = args.options["role"], !role.isEmpty else { throw Arguments.UsageError(message: "missing --role ROLE") }
            let scopes = args.repeated["scope"] ?? []
            if action == "grant" && scopes.isEmpty && !args.has("write-global") {
                throw Arguments.UsageError(message: "missing --scope VALUE (one or more), or --write-global")
            }
            if action == "revoke" && args.has("write-global") {
                throw Arguments.UsageError(message: "--write-global goes with grant: a grant without it makes the global tables read-only to the role")
            }
            let url = try backendURL(action)
            guard url.scheme == "postgres" else { throw Arguments.UsageError(message: "\(action) is for postgres:// URLs: scoped sync needs PostgreSQL's row-level security") }
            if action == "grant" {
                let writeGlobal = args.has("write-global")
                try PostgresBackend.grant(conninfo: url.location, role: role, scopes: scopes, writeGlobal: writeGlobal)
                let granted = scopes.isEmpty ? "no scopes" : "the scope\(scopes.count == 1 ? "" : "s") \(scopes.joined(separator: ", "))"
                Output.write("granted \(role) \(granted) on \(url.name); global tables \(writeGlobal ? "readable and writable" : "read-only")\n")
            } else {
                try PostgresBackend.revoke(conninfo: url.location, role: role, scopes: scopes.isEmpty ? nil : scopes)
                Output.write("revoked \(scopes.isEmpty ? "every scope" : scopes.joined(separator: ", ")) from \(role) on \(url.name)\n")
            }
        case "reset":
            try args.require(["reset", "DB"])
            let db = try openDatabase(args.positionals[1])
            let cleared = try db.sync.disconnectAndClear(discardPending: args.has("discard-pending"))
            let rows =
                cleared.deletedRows.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                + (cleared.deletedWaitingRows > 0 ? ["\(cleared.deletedWaitingRows) for undeclared tables"] : [])
            let total = cleared.deletedRows.values.reduce(cleared.deletedWaitingRows, +)
            Output.write(
                "reset \(db.path): unbound from its backend; deleted \(total) synced row\(total == 1 ? "" : "s") from this file (\(rows.isEmpty ? "no synced tables" : rows.joined(separator: ", "))), which the backend keeps; local-only tables kept\(cleared.discardedUploads > 0 ? "; discarded \(cleared.discardedUploads) queued upload entries" : "")\n"
            )
        default:
            throw Arguments.UsageError(message: "unknown action '\(action)' (setup, compact, check, grant, revoke or reset)")
        }
        return 0
    }

    /// Prints `audit` of the server `name`; 1 when it flags a problem.
    private static func check(_ audit: PostgresAudit, name: String, json: Bool) -> Int32 {
        func strings(_ list: [String]) -> String { "[" + list.map { Output.jsonString($0) }.joined(separator: ",") + "]" }
        if json {
            let objects = audit.objects.map { object in
                Output.object([
                    ("kind", Output.jsonString(object.kind)), ("name", Output.jsonString(object.name)),
                    ("owner", Output.jsonString(object.owner)), ("privileges", strings(object.privileges)),
                    (object.kind == "function" ? "security_definer" : "row_level_security", String(object.guarded)),
                ])
            }
            Output.write(
                Output.object([
                    ("ok", String(audit.problems.isEmpty)), ("objects", "[" + objects.joined(separator: ",") + "]"),
                    ("problems", strings(audit.problems)), ("notes", strings(audit.notes)),
                ]) + "\n")
        } else {
            var text = "\(name): \(audit.objects.count) Tandem objects\n"
            for object in audit.objects {
                let guarded = object.guarded ? (object.kind == "function" ? ", runs as its owner" : ", row-level security") : ""
                let others = object.privileges.isEmpty ? "no other role" : object.privileges.joined(separator: "; ")
                text += "  \(object.kind) \(object.name) (owner \(object.owner)\(guarded)): \(others)\n"
            }
            for note in audit.notes { text += "note: \(note)\n" }
            for problem in audit.problems { text += "problem: \(problem)\n" }
            text += audit.problems.isEmpty ? "ok: no role reaches past what Tandem grants it\n" : ""
            Output.write(Output.escapingControlCharactersInMessage(CommandHints.inCommandTerms(text)))
        }
        return audit.problems.isEmpty ? 0 : 1
    }

    /// `7d`, `12h`, `30m`, `90s` or a number of seconds, as seconds.
    static func duration(_ text: String) throws -> Double {
        guard let seconds = DurationArgument.seconds(text) else {
            throw Arguments.UsageError(message: "--retention takes a duration such as 7d, 12h, 30m or 90s, not '\(text)'")
        }
        return seconds
    }
}
