import Foundation
import Tandem

/// Printing rows for people (an aligned table) and for programs (JSON, column order kept).
enum Output {
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// A JSON object per row, keys in column order.
    static func json(_ row: Row) -> String {
        "{" + zip(row.columns, row.values).map { "\(JSONValue.string($0).jsonText):\(json($1))" }.joined(separator: ",") + "}"
    }

    static func json(_ rows: [Row]) -> String {
        "[" + rows.map(json).joined(separator: ",") + "]"
    }

    static func json(_ value: DatabaseValue) -> String {
        switch value {
        case .null: return "null"
        case .integer(let i): return String(i)
        case .real(let d): return d.isFinite ? JSONValue.double(d).jsonText : "null"
        case .text(let s): return JSONValue.string(s).jsonText
        case .blob(let d): return JSONValue.string(d.base64EncodedString()).jsonText
        }
    }

    /// `{"key":value,…}` from ordered pairs of already-encoded JSON values.
    static func object(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { "\(JSONValue.string($0.0).jsonText):\($0.1)" }.joined(separator: ",") + "}"
    }

    static func table(_ rows: [Row], columns: [String]? = nil) -> String {
        let header = columns ?? rows.first?.columns ?? []
        if header.isEmpty { return "(no rows)\n" }
        let cells = rows.map { $0.values.map { $0.isNull ? "NULL" : $0.description } }
        var widths = header.map(\.count)
        for row in cells { for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) } }
        func line(_ values: [String]) -> String {
            zip(values, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        var text = line(header) + "\n" + line(widths.map { String(repeating: "-", count: $0) }) + "\n"
        for row in cells { text += line(row) + "\n" }
        text += "(\(rows.count) row\(rows.count == 1 ? "" : "s"))\n"
        return text
    }
}
