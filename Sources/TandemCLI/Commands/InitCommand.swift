import Foundation
import Tandem

enum InitCommand {
    static let command = CommandLineTool.Command(
        name: "init", summary: "create a database from a schema file, or validate and upgrade it",
        usage: """
            Usage: tandem init DB --schema FILE [--json]

            Creates DB (WAL mode, mode 0600) with the tables of the JSON schema FILE, or validates an
            existing DB and upgrades its views to FILE (new columns read NULL; no data is migrated).

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

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, flags: ["json"], options: ["schema"])
        try args.require(["DB"])
        guard let schemaPath = args.options["schema"] else { throw Arguments.UsageError(message: "missing --schema FILE") }
        let schema = try Schema(contentsOf: URL(fileURLWithPath: schemaPath))
        let path = args.positionals[0]
        // An existing Tandem file's layout is checked first, read-only: damage that cannot be
        // repaired safely refuses the command before anything changes.
        let exists = FileManager.default.fileExists(atPath: path)
        let existing = exists ? try? readOnlyDatabase(path) : nil
        // A file whose stored schema was deleted is checked against the one given.
        let findings = try existing?.checkLayout() ?? (exists ? SharedDatabase.checkLayout(path: path, schema: schema) : [])
        let unrepairable = findings.filter { !$0.isRepairable }
        if exists, !unrepairable.isEmpty {
            throw TandemError.damagedLayout(path: existing?.path ?? path, problems: unrepairable.map(\.problem))
        }
        let typeChanges = existing.map { schema.typeChanges(from: $0.schema) } ?? []
        let db = try SharedDatabase(path: path, schema: schema)  // refuses a collision before changing anything
        // An upgrade regenerates every view and trigger; the repair does the rest.
        if exists { _ = try db.repairLayout() }
        let repaired = findings.compactMap(\.repair)
        let tables = schema.tables.map(\.name)
        if args.has("json") {
            Output.write(Output.object([("path", JSONValue.string(db.path).jsonText),
                                        ("tables", JSONValue.array(tables.map { .string($0) }).jsonText),
                                        ("journal_mode", JSONValue.string(try db.journalMode()).jsonText),
                                        ("type_changes", JSONValue.array(typeChanges.map { .string($0) }).jsonText),
                                        ("repaired", JSONValue.array(repaired.map { .string($0) }).jsonText)]) + "\n")
        } else {
            for repair in repaired { Output.write("repaired: \(repair)\n") }
            Output.write("initialised \(db.path): \(tables.isEmpty ? "no tables" : tables.joined(separator: ", ")) (journal_mode \(try db.journalMode()))\n")
            for change in typeChanges {
                Output.write("\(change): stored values are kept and read as \(change.split(separator: " ").last ?? "")\n")
            }
        }
        return 0
    }

    /// An existing Tandem file opened read-only, with its stored schema.
    private static func readOnlyDatabase(_ path: String) throws -> SharedDatabase {
        var configuration = Configuration()
        configuration.readOnly = true
        return try SharedDatabase(path: path, configuration: configuration)
    }
}
