import Foundation
import Tandem

enum SchemaCommand {
    static let command = CommandLineTool.Command(
        name: "schema", summary: "print the stored schema (JSON for init, or Swift records)",
        usage: """
            Usage: tandem schema DB [--swift]

            Prints the schema stored in DB as the JSON that `tandem init --schema` accepts, or with
            --swift as Record type declarations for the typed API: one struct per table, named in
            the singular (notes → Note, todo_items → TodoItem), properties in lowerCamelCase
            (created_at → createdAt, mapped back by CodingKeys), Swift keywords in backticks, every
            column optional (rows written by SQL may leave any of them NULL).

            Example: tandem schema app.db > schema.json

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, flags: ["swift"])
        try args.require(["DB"])
        let db = try openDatabase(args.positionals[0], readOnly: true)
        Output.write(args.has("swift") ? SwiftRecordSource.declarations(db.schema) : prettyJSON(db.schema) + "\n")
        return 0
    }

    static func prettyJSON(_ schema: Schema) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(schema)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
