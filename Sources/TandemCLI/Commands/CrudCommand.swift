import Foundation
import Tandem

enum CrudCommand {
    static let command = CommandLineTool.Command(
        name: "crud", summary: "list the upload queue",
        usage: """
            Usage: tandem crud DB [--json]

            Lists the CRUD entries waiting for upload, oldest first: entry id, transaction id,
            operation, table, row id and data. --json prints one JSON array of objects.

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, flags: ["json"])
        try args.require(["DB"])
        let db = try openDatabase(args.positionals[0], readOnly: true)
        let rows = try db.fetchAll("""
            SELECT id, tx_id, data ->> '$.op' AS op, data ->> '$.type' AS type, data ->> '$.id' AS row_id,
                   data -> '$.data' AS data FROM ps_crud ORDER BY id
            """)
        if args.has("json") {
            let objects = rows.map { row in
                Output.object([("id", Output.json(row[0])), ("tx_id", Output.json(row[1])), ("op", Output.json(row[2])),
                               ("type", Output.json(row[3])), ("row_id", Output.json(row[4])),
                               ("data", row[5].stringValue ?? "null")])
            }
            Output.write("[" + objects.joined(separator: ",") + "]\n")
        } else {
            Output.write(Output.table(rows))
        }
        return 0
    }
}
