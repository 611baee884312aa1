import Foundation
import Tandem

enum SchemaCommand {
    static let command = CommandLineTool.Command(
        name: "schema", summary: "print the stored schema (JSON for init, or Swift records)",
        usage: """
            Usage: tandem schema DB [--swift | --history [--json]]

            Prints the schema stored in DB as the JSON that `tandem init --schema` accepts, or with
            --swift as Record type declarations for the typed API: one struct per table, named in
            the singular (notes → Note, todo_items → TodoItem), properties in lowerCamelCase
            (created_at → createdAt, mapped back by CodingKeys), Swift keywords in backticks, every
            column optional (rows written by SQL may leave any of them NULL).

            With --history, lists the migrations DB applied, oldest first: its schema version (how
            many), each migration's id, when it was applied (UTC), whether its changes uploaded,
            and "recorded" for one a new file took as applied without running it.

            Example: tandem schema app.db > schema.json

            """, syntax: Arguments.Syntax(flags: ["swift", "history", "json"]), hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"])
        let db = try openDatabase(args.positionals[0], readOnly: true)
        if args.has("history") {
            try printHistory(db, json: args.has("json"))
            return 0
        }
        Output.write(args.has("swift") ? SwiftRecordSource.declarations(db.schema) : prettyJSON(db.schema) + "\n")
        return 0
    }

    static func prettyJSON(_ schema: Schema) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(schema)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    private static func printHistory(_ db: SharedDatabase, json: Bool) throws {
        let history = try db.migrationHistory()
        let formatter = ISO8601DateFormatter()
        if json {
            let rows = history.map { m in
                Output.object([
                    ("version", "\(m.version)"), ("id", Output.jsonString(m.id)), ("applied_at", Output.jsonString(formatter.string(from: m.appliedAt))),
                    ("uploads", Output.jsonString(m.uploads.rawValue)), ("ran", m.ran ? "true" : "false"),
                ])
            }
            Output.write(Output.object([("schema_version", "\(history.count)"), ("migrations", "[" + rows.joined(separator: ",") + "]")]) + "\n")
            return
        }
        Output.write("schema version \(history.count)\n")
        for m in history {
            Output.write(
                "\(m.version)  \(Output.escapingControlCharacters(m.id))  \(formatter.string(from: m.appliedAt))  uploads \(m.uploads.rawValue)\(m.ran ? "" : "  recorded")\n")
        }
    }
}
