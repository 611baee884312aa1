import Foundation
import Tandem

enum InitCommand {
    static let command = CommandLineTool.Command(
        name: "init", summary: "create a database from a schema file, or validate and upgrade it",
        usage: """
            Usage: tandem init DB --schema FILE [--json]

            Creates DB (WAL mode, mode 0600) with the tables of the JSON schema FILE, or validates an
            existing DB and upgrades its views to FILE (new columns read NULL; no data is migrated).

            Schema file: {"tables":[{"name":"notes","columns":[{"name":"title","type":"text"}],
                          "indexes":[{"name":"by_title","columns":["title"]}],
                          "localOnly":false,"insertOnly":false}]}

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, flags: ["json"], options: ["schema"])
        try args.require(["DB"])
        guard let schemaPath = args.options["schema"] else { throw Arguments.UsageError(message: "missing --schema FILE") }
        let schema = try Schema(contentsOf: URL(fileURLWithPath: schemaPath))
        let path = args.positionals[0]
        let previous = FileManager.default.fileExists(atPath: path) ? try? storedSchema(path) : nil
        let typeChanges = previous.map { schema.typeChanges(from: $0) } ?? []
        let db = try SharedDatabase(path: path, schema: schema)
        let tables = schema.tables.map(\.name)
        if args.has("json") {
            Output.write(Output.object([("path", JSONValue.string(db.path).jsonText),
                                        ("tables", JSONValue.array(tables.map { .string($0) }).jsonText),
                                        ("journal_mode", JSONValue.string(try db.journalMode()).jsonText),
                                        ("type_changes", JSONValue.array(typeChanges.map { .string($0) }).jsonText)]) + "\n")
        } else {
            Output.write("initialised \(db.path): \(tables.isEmpty ? "no tables" : tables.joined(separator: ", ")) (journal_mode \(try db.journalMode()))\n")
            for change in typeChanges {
                Output.write("\(change): stored values are kept and read as \(change.split(separator: " ").last ?? "")\n")
            }
        }
        return 0
    }

    /// The schema stored in an existing Tandem file, read without changing it.
    private static func storedSchema(_ path: String) throws -> Schema {
        var configuration = Configuration()
        configuration.readOnly = true
        return try SharedDatabase(path: path, configuration: configuration).schema
    }
}
