import Foundation
import Tandem

enum InitCommand {
    static let command = CommandLineTool.Command(
        name: "init", summary: "create a database from a schema file, or validate and upgrade it",
        usage: """
            Usage: tandem init DB --schema FILE [--upload-local-rows] [--adopt] [--json]

            Creates DB (WAL mode, mode 0600) with the tables of the JSON schema FILE, or validates an
            existing DB and upgrades its views to FILE (new columns read NULL). FILE's migrations
            that DB has not applied run first, and are printed as `tandem migrate` prints them.

            An upgrade prints what it does to stored rows: a table no longer declared keeps its rows,
            unread; a dropped column keeps its values; a column with a new type keeps its values and
            reads them as that type; a table made local-only keeps its rows here, unsynced; a table
            made insert-only sets its rows aside. A table that was local-only and is synced (or
            insert-only) in FILE would queue its rows for upload, so they leave this host: that is
            refused, changing nothing, unless --upload-local-rows is given.

            An existing SQLite database that Tandem did not make, with tables (or views, indexes,
            triggers) of its own, is refused, changing nothing, unless --adopt is given: init
            switches it to WAL mode and adds Tandem's tables beside its own, which are kept as they
            are and not synced; it says so.

            An existing DB's layout is checked first (as `tandem check` does, without the page
            check) and repaired where that loses nothing: missing or changed views, triggers and
            indexes are regenerated, missing counters are restored with safe values, and Tandem's
            settings deleted by another program are restored (the schema from FILE, a new client
            id, the owner epoch); each repair is printed as "repaired: …". Damage that cannot be repaired safely (a data table with the
            wrong columns, say) is named and nothing is changed (exit 1). A refused DB is left as
            it was, and a DB this command created is removed again when it fails.

            Schema file: {"tables":[{"name":"notes","columns":[{"name":"title","type":"text"}],
                          "indexes":[{"name":"by_title","columns":["title"]}],
                          "localOnly":false,"insertOnly":false}]}

            Example: tandem init app.db --schema schema.json

            """, syntax: Arguments.Syntax(flags: ["json", "upload-local-rows", "adopt"], options: ["schema"]), hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"])
        guard let schemaPath = args.options["schema"] else { throw Arguments.UsageError(message: "missing --schema FILE") }
        let schema = try Schema(contentsOf: URL(fileURLWithPath: schemaPath))
        let path = args.positionals[0]
        // Another program's database becomes a Tandem one only when asked.
        let survey = try DatabaseFileSurvey.of(path: path)
        let adopted = survey.flatMap { $0.isTandemDatabase ? nil : $0 }
        if let adopted, let collision = adopted.collisions(with: schema).first {
            throw TandemError.invalidSchema(
                SchemaProblem(
                    .nameCollision, table: collision.name, "table '\(collision.name)' collides with an existing \(collision.type) of that name in '\(adopted.path)'"))
        }
        if let adopted, !adopted.foreignObjects.isEmpty, !args.has("adopt") {
            throw AdoptionRefused(path: path, survey: adopted)
        }
        // An existing Tandem file's layout is checked first, read-only: damage that cannot be
        // repaired safely refuses the command before anything changes.
        let exists = FileManager.default.fileExists(atPath: path)
        var existing = exists ? try? readOnlyDatabase(path) : nil
        // Migrations the file has not applied run first (as `tandem migrate` runs them), so that
        // what the upgrade says below is about the migrated rows (a renamed column is not "dropped").
        var migrated: MigrationReport?
        if let current = existing, try current.schemaVersion() < schema.migrations.count, try current.checkLayout().allSatisfy(\.isRepairable) {
            let db = try openDatabase(path)
            migrated = try db.migrate(to: schema)
            db.close()
            existing = try readOnlyDatabase(path)
        }
        // A file whose stored schema was deleted is checked against the one given.
        let findings = try existing?.checkLayout() ?? (exists ? SharedDatabase.checkLayout(path: path, schema: schema) : [])
        let unrepairable = findings.filter { !$0.isRepairable }
        if exists, !unrepairable.isEmpty {
            throw TandemError.damagedLayout(path: existing?.path ?? path, problems: unrepairable.map(\.problem))
        }
        let typeChanges = existing.map { schema.typeChanges(from: $0.schema) } ?? []
        let upgrade = try existing?.upgrade(to: schema) ?? SchemaUpgrade()
        if upgrade.localRowsToUpload > 0 && !args.has("upload-local-rows") {
            let tables = upgrade.effects.compactMap { effect -> String? in
                guard case .localRowsUploaded(let table, let rows) = effect, rows > 0 else { return nil }
                return "\(table) (\(rows) row\(rows == 1 ? "" : "s"))"
            }
            throw UploadRefused(path: existing?.path ?? path, tables: tables)
        }
        var configuration = Configuration()
        BusyTimeoutOption.apply(to: &configuration)
        reportWaitsForMigrations(&configuration, path: path)
        let db = try SharedDatabase(path: path, schema: schema, configuration: configuration)  // refuses a collision before changing anything
        // An upgrade regenerates every view and trigger; the repair does the rest.
        let rowRepairs = exists ? try db.repairLayout(storedRows: true).filter { finding in !findings.contains(finding) } : []
        let repaired = (findings + rowRepairs).compactMap(\.repair)
        let tables = schema.tables.map(\.name)
        if args.has("json") {
            Output.write(
                Output.object([
                    ("path", Output.jsonString(db.path)),
                    ("tables", Output.json(JSONValue.array(tables.map { .string($0) }))),
                    ("journal_mode", Output.jsonString(try db.journalMode())),
                    ("type_changes", Output.json(JSONValue.array(typeChanges.map { .string($0) }))),
                    ("effects", Output.json(JSONValue.array(upgrade.effects.map { .string($0.description) }))),
                    ("adopted", Output.json(JSONValue.array((adopted?.foreignObjects ?? []).map { .string($0.description) }))),
                    ("repaired", Output.json(JSONValue.array(repaired.map { .string($0) }))),
                    ("migrations_ran", Output.json(JSONValue.array((migrated?.ran ?? []).map { .string($0) }))),
                ]) + "\n")
        } else {
            for repair in repaired { Output.write("repaired: \(repair)\n") }
            if let migrated, !migrated.ran.isEmpty { Output.write(migrated.description + "\n") }
            Output.write("initialised \(db.path): \(tables.isEmpty ? "no tables" : tables.joined(separator: ", ")) (journal_mode \(try db.journalMode()))\n")
            for effect in upgrade.effects { Output.write("\(effect)\n") }
            if let adopted {
                let mode = try db.journalMode()
                Output.write(
                    "adopted \(db.path), a database Tandem did not make: journal mode \(adopted.journalMode == mode ? "\(mode) as it was" : "\(adopted.journalMode) switched to \(mode)")"
                        + (adopted.foreignObjects.isEmpty ? "" : "; its own \(adopted.foreignObjects.map(\.description).joined(separator: ", ")) kept as they were, not synced")
                        + "\n")
            }
        }
        return 0
    }

    /// Another program's database, asked without --adopt.
    struct AdoptionRefused: Error, CustomStringConvertible {
        let path: String
        let survey: DatabaseFileSurvey
        var description: String {
            "'\(path)' is an SQLite database that Tandem did not make (\(survey.foreignObjects.map(\.description).joined(separator: ", "))); init would switch it to WAL mode\(survey.journalMode == "wal" ? "" : " (from \(survey.journalMode))") and add Tandem's tables beside its own. Nothing was changed; run again with --adopt to do so"
        }
    }

    /// An upgrade that would upload local-only rows, asked without --upload-local-rows.
    struct UploadRefused: Error, CustomStringConvertible {
        let path: String
        let tables: [String]
        var description: String {
            "'\(path)': the schema file makes local-only tables synced, so their rows would be queued for upload and leave this host: \(tables.joined(separator: ", ")); nothing was changed. Run again with --upload-local-rows to upload them, or keep those tables \"localOnly\": true"
        }
    }

    /// An existing Tandem file opened read-only, with its stored schema.
    private static func readOnlyDatabase(_ path: String) throws -> SharedDatabase {
        var configuration = Configuration()
        configuration.readOnly = true
        return try SharedDatabase(path: path, configuration: configuration)
    }
}
