import Foundation
import Tandem

enum ExecCommand {
    static let command = CommandLineTool.Command(
        name: "exec", summary: "run SQL in one write transaction",
        usage: """
            Usage: tandem exec DB SQL [ARG…]

            Runs SQL (one or several ';'-separated statements) in one write transaction; each '?'
            takes the next ARG (whole numbers bind as integers, decimals as reals, the rest as text).
            Exits 0 only if the transaction committed. Writes through table views are queued for upload.
            Use '--' before ARGs that start with '--'.

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words)
        try args.require(["DB", "SQL"], more: true)
        let db = try openDatabase(args.positionals[0])
        let sql = args.positionals[1]
        let values = args.positionals.dropFirst(2).map(bindValue)
        try db.write { try $0.execute(sql, values) }
        return 0
    }
}
