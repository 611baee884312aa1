import Foundation
import Tandem

enum ImportCommand {
    static let command = CommandLineTool.Command(
        name: "import", summary: "sync a JSON array of objects (or NDJSON) into a table",
        usage: """
            Usage: tandem import DB TABLE [FILE | -] [--ndjson] [--map KEY=COLUMN]… [--delete-missing]
                   [--scope COLUMN=VALUE] [--nested KEY=TABLE]… [--strict] [--json]

            Syncs a JSON array of objects (from FILE, or standard input), or with --ndjson
            newline-delimited objects (one per line, as jq -c writes them), into TABLE in one write
            transaction, reading it as it goes: memory stays bounded (about 140 MB) whatever the
            payload's size. Keys map to columns by name, then by convention (createdAt ↔ created_at),
            after --map KEY=COLUMN (KEY=id takes the id from KEY). A --map to no column, two keys
            of one element for one column (created_at and createdAt) and a key twice in one object
            are refused, naming the key. New ids are inserted; rows whose values changed are updated (only those
            columns: one minimal PATCH each); equal rows are left alone (no CRUD entry); rows absent
            from the payload are deleted only with --delete-missing, within --scope COLUMN=VALUE when
            given. --nested KEY=TABLE puts each element's KEY array into TABLE with its {parent}_id
            set. Real columns take numbers (Unix timestamps) and ISO 8601 dates and times, read whole
            (2024-01-02, 2024-01-02T03:04:05.25+02:00, 2024-W01-2; a time without a zone is UTC;
            other text, such as 2024-01-02T25:00 or a date followed by anything, is refused); a
            number no column stores exactly (1e400, an integer beyond 64 bits that a real would
            round) is refused. A
            payload that does not fit (missing or duplicate ids, wrong types, unknown keys with
            --strict, text that is not JSON) is rejected whole, naming the bad element's index and
            key, and nothing is written; an import killed half way leaves nothing either (the one
            transaction rolls back). Other writers wait for the import to end.
            An insert-only table keeps no local rows to compare with: every element is inserted (a
            PUT queued for upload, at every import), and --delete-missing and --scope are refused.
            Prints what it inserted, updated, deleted and left alone. On a terminal a progress line
            (rows, rows/s, time, and the time left when the payload is a file) is redrawn on
            standard error; with --json, or off a terminal, nothing is.

            Example: curl -s https://api.example.com/notes | tandem import app.db notes - --delete-missing

            """, syntax: Arguments.Syntax(flags: ["delete-missing", "strict", "json", "ndjson"], options: ["scope"], repeatable: ["map", "nested"]), hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB", "TABLE"], more: true)
        guard args.positionals.count <= 3 else { throw Arguments.UsageError(message: "unexpected argument '\(args.positionals[3])'") }
        var options = ImportOptions(
            keyMap: try pairs(args.repeated["map"] ?? [], option: "map"),
            deleteMissing: args.has("delete-missing"),
            nested: try pairs(args.repeated["nested"] ?? [], option: "nested"), strict: args.has("strict"),
            format: args.has("ndjson") ? .ndjson : .array)
        if let scope = args.options["scope"] {
            guard let pair = try pairs([scope], option: "scope").first else { throw Arguments.UsageError(message: "--scope takes COLUMN=VALUE") }
            options.scope = (pair.key, pair.value)
        }
        let source = args.positionals.count == 3 ? args.positionals[2] : "-"
        if source != "-" { try checkPayloadFile(source) }
        let db = try openDatabase(args.positionals[0])
        let table = args.positionals[1]
        let line = ProgressLine("import \(table)", unit: .rows, quiet: args.has("json"))
        defer { line.finish() }
        let result = try db.importJSON(from: source == "-" ? (CapturedStreams.current.map { .data($0.input) } ?? .standardInput) : .file(source), into: table, options: options) {
            progress in
            line.update(Int64(progress.elements), fraction: progress.fractionRead)
        }
        line.finish()
        if args.has("json") {
            Output.write(
                Output.object(
                    result.tables.keys.sorted().map { name in
                        let c = result.tables[name]!
                        return (
                            name,
                            Output.object([
                                ("inserted", String(c.inserted)), ("updated", String(c.updated)),
                                ("deleted", String(c.deleted)), ("unchanged", String(c.unchanged)),
                            ])
                        )
                    }) + "\n")
        } else {
            Output.write(result.description + "\n")
        }
        return 0
    }

    /// Refuses, before the database is opened, a payload file that cannot be read, saying why.
    static func checkPayloadFile(_ path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CommandFailure("cannot read the payload file '\(path)': no such file (give a file of JSON, or - for standard input)")
        }
        if isDirectory.boolValue { throw CommandFailure("cannot read the payload file '\(path)': it is a directory, not a file") }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { throw CommandFailure("cannot read the payload file '\(path)': \(String(cString: strerror(errno)))") }
        close(fd)
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
