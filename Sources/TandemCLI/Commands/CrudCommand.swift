import Foundation
import Tandem

enum CrudCommand {
    static let command = CommandLineTool.Command(
        name: "crud", summary: "list the upload queue and the uploads the backend refused",
        usage: """
            Usage: tandem crud DB [--json]
                   tandem crud DB --retry TX|all
                   tandem crud DB --discard TX|all

            Lists the CRUD entries waiting for upload, oldest first: entry id, transaction id,
            operation, table, row id and data; then the transactions the backend refused for good
            (a value its column cannot take, a constraint, a permission), set aside with the
            server's error so that later uploads and downloads go on. --json prints one JSON array
            of objects, those set aside with "rejected" and "error".
            --retry queues a set-aside transaction (or all) again, once its reason is fixed;
            --discard drops it (or all) for good.

            Example: tandem crud app.db --json

            """, syntax: Arguments.Syntax(flags: ["json"], options: ["retry", "discard"]), hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"])
        if let which = args.options["retry"] ?? args.options["discard"] {
            guard (args.options["retry"] == nil) != (args.options["discard"] == nil) else {
                throw Arguments.UsageError(message: "--retry and --discard go alone")
            }
            let transactionID: Int64? =
                which == "all"
                ? nil
                : try Int64(which)
                    ?? {
                        throw Arguments.UsageError(message: "--\(args.options["retry"] != nil ? "retry" : "discard") takes a transaction id or all, not '\(which)'")
                    }()
            let db = try openDatabase(args.positionals[0])
            if let id = transactionID, try !db.uploadQueue.rejected().contains(where: { $0.transaction.transactionID == id }) {
                throw CommandFailure("no set-aside transaction \(id) in \(db.path) (tandem crud \(db.path) lists them)")
            }
            if args.options["retry"] != nil {
                let count = try db.uploadQueue.retryRejected(transactionID: transactionID)
                Output.write("queued \(count) set-aside transaction\(count == 1 ? "" : "s") for upload again\n")
            } else {
                let count = try db.uploadQueue.discardRejected(transactionID: transactionID)
                Output.write("discarded \(count) CRUD entr\(count == 1 ? "y" : "ies") for good\n")
            }
            return 0
        }
        let db = try openDatabase(args.positionals[0], readOnly: true)
        let entries = try db.uploadQueue.transactions(limit: .max).flatMap(\.entries)
        let rejected = try db.uploadQueue.rejected()
        let columns = ["id", "tx_id", "op", "type", "row_id", "data"]
        func row(_ entry: CrudEntry) -> Row {
            Row(
                columns: columns,
                values: [
                    .integer(entry.id), .integer(entry.transactionID), .text(entry.op.rawValue), .text(entry.table),
                    .text(entry.rowID), entry.data.map { .text(JSONValue.object($0).jsonText) } ?? .null,
                ])
        }
        if args.has("json") {
            func object(_ entry: CrudEntry, rejected: RejectedTransaction?) -> String {
                let row = row(entry)
                var pairs = [
                    ("id", Output.json(row[0])), ("tx_id", Output.json(row[1])), ("op", Output.json(row[2])),
                    ("type", Output.json(row[3])), ("row_id", Output.json(row[4])), ("data", entry.data.map { Output.json(JSONValue.object($0)) } ?? "null"),
                ]
                if let rejected { pairs += [("rejected", "true"), ("error", Output.jsonString(rejected.error))] }
                return Output.object(pairs)
            }
            let objects =
                entries.map { object($0, rejected: nil) }
                + rejected.flatMap { set in set.transaction.entries.map { object($0, rejected: set) } }
            Output.write("[" + objects.joined(separator: ",") + "]\n")
        } else {
            Output.write(Output.table(entries.map(row), columns: columns))
            for set in rejected {
                Output.write(
                    "\nset aside at \(set.rejectedAt.ISO8601Format()), transaction \(set.transaction.transactionID): \(Output.line(set.error))\n")
                Output.write(Output.table(set.transaction.entries.map(row), columns: columns))
            }
        }
        return 0
    }
}
