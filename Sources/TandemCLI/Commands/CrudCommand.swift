import Foundation
import Tandem

enum CrudCommand {
    static let command = CommandLineTool.Command(
        name: "crud", summary: "list the upload queue",
        usage: """
            Usage: tandem crud DB [--json]

            Lists the CRUD entries waiting for upload, oldest first: entry id, transaction id,
            operation, table, row id and data. --json prints one JSON array of objects.

            Example: tandem crud app.db --json

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, flags: ["json"])
        try args.require(["DB"])
        let db = try openDatabase(args.positionals[0], readOnly: true)
        let entries = try db.crudTransactions(limit: .max).flatMap(\.entries)
        let columns = ["id", "tx_id", "op", "type", "row_id", "data"]
        let rows = entries.map { entry in
            Row(columns: columns, values: [.integer(entry.id), .integer(entry.transactionID), .text(entry.op.rawValue), .text(entry.table),
                                           .text(entry.rowID), entry.data.map { .text(JSONValue.object($0).jsonText) } ?? .null])
        }
        if args.has("json") {
            let objects = rows.map { row in
                Output.object([("id", Output.json(row[0])), ("tx_id", Output.json(row[1])), ("op", Output.json(row[2])),
                               ("type", Output.json(row[3])), ("row_id", Output.json(row[4])),
                               ("data", row[5].stringValue ?? "null")])
            }
            Output.write("[" + objects.joined(separator: ",") + "]\n")
        } else {
            Output.write(Output.table(rows, columns: columns))
        }
        return 0
    }
}
