import Foundation
import Tandem

enum ImportCommand {
    static let command = CommandLineTool.Command(
        name: "import", summary: "sync a JSON array of objects into a table",
        usage: """
            Usage: tandem import DB TABLE [FILE | -] [--map KEY=COLUMN]… [--delete-missing]
                   [--scope COLUMN=VALUE] [--nested KEY=TABLE]… [--strict] [--json]

            Syncs a JSON array of objects (from FILE, or standard input) into TABLE in one write
            transaction: keys map to columns by name, then by convention (createdAt ↔ created_at),
            after --map KEY=COLUMN (KEY=id takes the id from KEY). A --map to no column, two keys
            of one element for one column (created_at and createdAt) and a key twice in one object
            are refused, naming the key. New ids are inserted; rows whose values changed are updated (only those
            columns: one minimal PATCH each); equal rows are left alone (no CRUD entry); rows absent
            from the payload are deleted only with --delete-missing, within --scope COLUMN=VALUE when
            given. --nested KEY=TABLE puts each element's KEY array into TABLE with its {parent}_id
            set. Real columns take numbers (Unix timestamps) and ISO 8601 dates and times, read whole
            (2024-01-02, 2024-01-02T03:04:05.25+02:00, 2024-W01-2; a time without a zone is UTC;
            other text, such as 2024-01-02T25:00 or a date followed by anything, is refused). A
            payload that does not fit (missing or duplicate ids, wrong types, unknown keys with
            --strict) is rejected whole, naming the first bad element's index and key, and nothing
            is written.
            An insert-only table keeps no local rows to compare with: every element is inserted (a
            PUT queued for upload, at every import), and --delete-missing and --scope are refused.
            Prints what it inserted, updated, deleted and left alone.

            Example: curl -s https://api.example.com/notes | tandem import app.db notes - --delete-missing

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, flags: ["delete-missing", "strict", "json"], options: ["scope"], repeatable: ["map", "nested"])
        try args.require(["DB", "TABLE"], more: true)
        guard args.positionals.count <= 3 else { throw Arguments.UsageError(message: "unexpected argument '\(args.positionals[3])'") }
        var options = ImportOptions(keyMap: try pairs(args.repeated["map"] ?? [], option: "map"),
                                    deleteMissing: args.has("delete-missing"),
                                    nested: try pairs(args.repeated["nested"] ?? [], option: "nested"), strict: args.has("strict"))
        if let scope = args.options["scope"] {
            guard let pair = try pairs([scope], option: "scope").first else { throw Arguments.UsageError(message: "--scope takes COLUMN=VALUE") }
            options.scope = (pair.key, pair.value)
        }
        let source = args.positionals.count == 3 ? args.positionals[2] : "-"
        let data: Data
        if source == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: source) else {
                throw Arguments.UsageError(message: "cannot read the payload file '\(source)'")
            }
            data = contents
        }
        let db = try openDatabase(args.positionals[0])
        let result = try db.importJSON(data, into: args.positionals[1], options: options)
        if args.has("json") {
            Output.write(Output.object(result.tables.keys.sorted().map { name in
                let c = result.tables[name]!
                return (name, Output.object([("inserted", String(c.inserted)), ("updated", String(c.updated)),
                                             ("deleted", String(c.deleted)), ("unchanged", String(c.unchanged))]))
            }) + "\n")
        } else {
            Output.write(result.description + "\n")
        }
        return 0
    }

    /// `KEY=VALUE` words as a map.
    static func pairs(_ words: [String], option: String) throws -> [String: String] {
        var result: [String: String] = [:]
        for word in words {
            let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw Arguments.UsageError(message: "--\(option) takes KEY=VALUE, not '\(word)'")
            }
            if let earlier = result[parts[0]] {
                throw Arguments.UsageError(message: "--\(option) \(parts[0]) is given twice (\(parts[0])=\(earlier) and \(word))")
            }
            result[parts[0]] = parts[1]
        }
        return result
    }
}

enum ExportCommand {
    static let command = CommandLineTool.Command(
        name: "export", summary: "print a table as a JSON array that import takes back",
        usage: """
            Usage: tandem export DB TABLE [--where SQL] [--keys snake|camel]

            Prints the rows of TABLE (those matching the SQL condition of --where) as a JSON array
            of objects, ordered by id, that `tandem import` takes back unchanged: importing it again
            changes nothing and queues nothing. --keys camel writes createdAt for created_at.

            Example: tandem export app.db notes --where "done = 0" --keys camel > open.json

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, options: ["where", "keys"])
        try args.require(["DB", "TABLE"])
        let keys = try args.options["keys"].map { text -> KeyStyle in
            guard let style = KeyStyle(rawValue: text) else { throw Arguments.UsageError(message: "--keys takes snake or camel, not '\(text)'") }
            return style
        } ?? .snake
        let db = try openDatabase(args.positionals[0], readOnly: true)
        Output.write(String(decoding: try db.exportJSON(table: args.positionals[1], where: args.options["where"], keys: keys), as: UTF8.self) + "\n")
        return 0
    }
}
