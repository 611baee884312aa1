import Foundation
import Tandem

enum ExecCommand {
    static let command = CommandLineTool.Command(
        name: "exec", summary: "run SQL in one write transaction",
        usage: """
            Usage: tandem exec DB SQL [ARG…] [--args-json JSON]

            Runs SQL (one or several ';'-separated statements) in one write transaction; each '?'
            takes the next ARG. An ARG binds as an integer or a real only when it reads back as the
            same text (42, -7, 2.5); anything else, such as 007, +5, 1e3 or 2.50, binds as text.
            --args-json '["007", 2.0, 3, null]' gives the arguments with exact JSON types instead.
            Exits 0 only if the transaction committed. Writes through table views are queued for upload.
            Use '--' before ARGs that start with '--'.

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, options: ["args-json"])
        try args.require(["DB", "SQL"], more: true)
        let db = try openDatabase(args.positionals[0])
        let sql = args.positionals[1]
        let values = try sqlArguments(args, after: 2)
        try db.write { try $0.execute(sql, values) }
        return 0
    }
}
