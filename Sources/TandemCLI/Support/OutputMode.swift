import Foundation
import Tandem

/// How `query`, `exec` and `watch` print rows: `--mode table|csv|tsv|json|ndjson|markdown|line`
/// (`--json` is `--mode json`), `--no-header`, `--null TEXT` (how NULL shows outside JSON).
struct OutputMode {
    enum Kind: String, CaseIterable { case table, csv, tsv, json, ndjson, markdown, line }

    var kind: Kind = .table
    var header = true
    var null = "NULL"

    static let flags: Set<String> = ["json", "no-header"]
    static let options: Set<String> = ["mode", "null"]
    static let usage = #"""
        Output: --mode table|csv|tsv|json|ndjson|markdown|line (default table; --json is --mode json),
        --no-header, --null TEXT (how NULL shows; default NULL, JSON always null). Control
        characters (U+0000–U+001F, U+007F, U+0080–U+009F) never reach the terminal raw except
        in csv: table, markdown and line show them as escapes (\n, \t, \r, \x1b), and the
        bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C) as \u202e;
        tsv writes \\, \t, \n, \r and \xHH (U+00HH), so every field reads back exactly; json
        and ndjson escape both as JSON does (\u001b, \u202e). CSV follows RFC 4180 (CRLF, fields quoted when needed)
        and keeps every character as it is.
        """#

    init(_ args: Arguments) throws {
        if let mode = args.options["mode"] {
            guard let kind = Kind(rawValue: mode.lowercased()) else {
                throw Arguments.UsageError(message: "--mode takes one of \(Kind.allCases.map(\.rawValue).joined(separator: ", ")), not '\(mode)'")
            }
            self.kind = kind
        }
        if args.has("json") {
            guard args.options["mode"] == nil || kind == .json else { throw Arguments.UsageError(message: "--json is --mode json; give one of them") }
            kind = .json
        }
        header = !args.has("no-header")
        null = args.options["null"] ?? "NULL"
    }

    /// One result set as text; `ndjson` gives one line per row (``watchLine(_:)`` one per result).
    func render(_ result: ResultSet) -> String {
        let columns = result.columns
        switch kind {
        case .table:
            return Output.table(result.rows, columns: columns, header: header, null: null)
        case .json:
            return Output.json(result.rows) + "\n"
        case .ndjson:
            return result.rows.map { Output.json($0) + "\n" }.joined()
        case .csv:
            return delimited(result, separator: ",", newline: "\r\n", field: Self.csvField)
        case .tsv:
            return delimited(result, separator: "\t", newline: "\n", field: Self.tsvField)
        case .markdown:
            var lines: [String] = []
            let cell = { (text: String) in Output.escapingControlCharacters(text).replacingOccurrences(of: "|", with: "\\|") }
            if header || !columns.isEmpty {
                lines.append("| " + columns.map(cell).joined(separator: " | ") + " |")
                lines.append("|" + columns.map { _ in " --- |" }.joined())
            }
            for row in result.rows { lines.append("| " + row.values.map { cell(text($0)) }.joined(separator: " | ") + " |") }
            return lines.map { $0 + "\n" }.joined()
        case .line:
            let names = columns.map(Output.escapingControlCharacters)
            let width = names.map(\.count).max() ?? 0
            return result.rows.map { row in
                zip(names, row.values).map {
                    String(repeating: " ", count: width - $0.count) + $0 + " = " + Output.escapingControlCharacters(text($1)) + "\n"
                }.joined()
            }.joined(separator: "\n")
        }
    }

    /// A result of `watch`: in JSON modes one line per result (`ndjson`: the result's array).
    func watchLine(_ result: ResultSet) -> String {
        switch kind {
        case .json, .ndjson: return Output.json(result.rows) + "\n"
        default: return render(result) + (kind == .table ? "\n" : "")
        }
    }

    private func text(_ value: DatabaseValue) -> String { value.isNull ? null : value.description }

    private func delimited(_ result: ResultSet, separator: String, newline: String, field: (String) -> String) -> String {
        var text = ""
        if header { text += result.columns.map(field).joined(separator: separator) + newline }
        for row in result.rows { text += row.values.map { field(self.text($0)) }.joined(separator: separator) + newline }
        return text
    }

    /// RFC 4180: quoted when it holds a comma, a quote, CR or LF; quotes doubled.
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Backslashes, tabs, newlines and carriage returns escaped (`\\`, `\t`, `\n`, `\r`), so a row
    /// is one line, and every other control character (C0, DEL, C1) as `\xHH` for U+00HH, so
    /// none reaches a terminal; unescaping gives the value back exactly.
    static func tsvField(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 == "\\" || Output.isControl($0) }) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\t": escaped += "\\t"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case _ where Output.isControl(scalar):
                let hex = String(scalar.value, radix: 16)
                escaped += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
