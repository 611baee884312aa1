import Foundation
import Tandem

/// Installs the typed-storage prototype (`TypedLayoutPrototype`) for the layout benchmark.
enum TypedLayoutCommand {
    static let command = CommandLineTool.Command(
        name: "typed-layout", summary: "(internal) store an empty table in typed columns, for the layout benchmark",
        usage: """
            Usage: tandem-test-support typed-layout DB TABLE

            Replaces the empty declared TABLE's data table, view and triggers in DB by the typed
            storage prototype that Tools/bench/layouts.py measures: typed columns behind the same
            view, the same write rules and the same CRUD entries. Inserts only.

            """, hidden: true, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB", "TABLE"])
        let db = try openDatabase(args.positionals[0])
        defer { db.close() }
        try db.write { tx in try TypedLayoutPrototype.install(table: args.positionals[1], in: tx) }
        return 0
    }
}
