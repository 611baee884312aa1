import Foundation
import Tandem

enum MigrateCommand {
    static let command = CommandLineTool.Command(
        name: "migrate", summary: "run a schema file's new migrations, or print their plan",
        usage: """
            Usage: tandem migrate DB --schema FILE [--dry-run] [--json]

            Runs the migrations of the schema FILE that DB has not applied, in order, then installs
            FILE's tables, in one write transaction under the write lock: other processes wait, and
            a migration that fails (or a process killed half way) changes nothing. Prints each
            step with the rows it wrote, the changes it queued for upload, the pending uploads it
            rewrote and the rows that leave this host. With --dry-run, runs everything and rolls
            it back: the plan, with its row counts, and DB as it was.

            A FILE whose list lost, reordered or repeats a migration, or is shorter than what DB
            applied (an older program's), is refused before anything changes.

            Schema file: {"tables":[…],"migrations":[{"id":"rename-title","uploads":"none",
                          "steps":[{"renameColumn":{"table":"notes","from":"title","to":"heading"}}]}]}
            Steps: renameColumn {table, from, to}; renameTable {from, to}; changeType {table,
            column, type, using?}; fill {table, column, value, where?}; dropColumn {table, column,
            discardValues: true}; dropTable {table, discardRows: true}; copyRows {from, into,
            columns: {column: SQL}, where?}; sql "SQL". "uploads": "none" when every host runs the
            migration (nothing uploads), "changes" for a fix made once (its changes upload).
            "readableByOlder": true lets a program of the release before open the file to read it.
            "server": ["SQL", …] are the migration's changes in PostgreSQL's SQL, which `tandem
            backend setup` runs once on the server (a backfill whose uploads are "none").

            Example: tandem migrate app.db --schema schema.json --dry-run

            """, syntax: Arguments.Syntax(flags: ["dry-run", "json"], options: ["schema"]), hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"])
        guard let schemaPath = args.options["schema"] else { throw Arguments.UsageError(message: "missing --schema FILE") }
        let schema = try Schema(contentsOf: URL(fileURLWithPath: schemaPath))
        let db = try openDatabase(args.positionals[0])
        defer { db.close() }
        let dryRun = args.has("dry-run")
        let line = ProgressLine("migrate", unit: .rows, quiet: args.has("json"))
        var done = 0
        let total = schema.migrations.reduce(0) { $0 + $1.steps.count }
        let report = try db.migrate(to: schema, dryRun: dryRun) { step in
            done += 1
            line.update(Int64(done), total: Int64(total), detail: "\(step.migration): \(step.step)")
        }
        line.finish()
        if args.has("json") {
            let steps = report.steps.map { step in
                Output.object([
                    ("migration", Output.jsonString(step.migration)), ("step", Output.jsonString(step.step)), ("rows_changed", "\(step.rowsChanged)"),
                    ("uploads_queued", "\(step.uploadsQueued)"), ("pending_rewritten", "\(step.pendingRewritten)"), ("rows_leaving_host", "\(step.rowsLeavingHost)"),
                ])
            }
            Output.write(
                Output.object([
                    ("path", Output.jsonString(db.path)), ("dry_run", dryRun ? "true" : "false"),
                    ("from_version", "\(report.fromVersion)"), ("to_version", "\(report.toVersion)"),
                    ("ran", "[" + report.ran.map(Output.jsonString).joined(separator: ",") + "]"), ("steps", "[" + steps.joined(separator: ",") + "]"),
                    ("additions", "[" + report.additions.map(Output.jsonString).joined(separator: ",") + "]"),
                ]) + "\n")
        } else {
            Output.write(report.description + "\n")
            if dryRun { Output.write("dry run: nothing was changed\n") }
        }
        return 0
    }
}
