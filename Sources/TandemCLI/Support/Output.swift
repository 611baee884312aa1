import Foundation
import Tandem

/// Printing rows for people (an aligned table) and for programs (JSON, column order kept).
enum Output {
    /// Writes to standard output at once. When the reader has gone (`tandem query … | head`),
    /// exits quietly with status 141, as a program killed by SIGPIPE would.
    static func write(_ text: String) {
        Array(text.utf8).withUnsafeBytes { write(bytes: $0) }
    }

    /// ``write(_:)`` of bytes.
    static func write(bytes: UnsafeRawBufferPointer) {
        if let captured = CapturedStreams.current { return captured.writeOutput(bytes) }
        if !writeAll(STDOUT_FILENO, bytes) { exit(141) }
    }

    /// Writes to standard error at once.
    static func error(_ text: String) {
        Array(text.utf8).withUnsafeBytes { bytes in
            if let captured = CapturedStreams.current { return captured.writeError(bytes) }
            _ = writeAll(STDERR_FILENO, bytes)
        }
    }

    /// write(2) until done; false on EPIPE or another error.
    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// A JSON object per row, keys in column order.
    static func json(_ row: Row) -> String {
        "{" + zip(row.columns, row.values).map { "\(jsonString($0)):\(json($1))" }.joined(separator: ",") + "}"
    }

    static func json(_ rows: [Row]) -> String {
        "[" + rows.map(json).joined(separator: ",") + "]"
    }

    static func json(_ value: DatabaseValue) -> String {
        switch value {
        case .null: return "null"
        case .integer(let i): return String(i)
        case .real(let d): return d.isFinite ? JSONValue.double(d).jsonText : "null"
        case .text(let s): return jsonString(s)
        case .blob(let d): return jsonString(d.base64EncodedString())
        }
    }

    /// A JSON string literal that reads back as `text`, safe on a terminal (``json(_:)-JSONValue``).
    static func jsonString(_ text: String) -> String {
        json(JSONValue.string(text))
    }

    /// `value`'s JSON text with every character a terminal may act on escaped: C0 and DEL as
    /// JSON requires (``JSONValue``), and C1 (U+0080–U+009F) and the bidirectional controls
    /// (``isBidiControl(_:)``) as `\u0080`, `\u202e`, …, which any JSON reader reads back as the
    /// same character. (Outside strings JSON text holds none of them, so escaping them wherever
    /// they stand keeps it JSON.)
    static func json(_ value: JSONValue) -> String {
        let literal = value.jsonText
        guard literal.unicodeScalars.contains(where: { $0.value >= 0x80 && isUnsafe($0) }) else { return literal }
        var escaped = ""
        for scalar in literal.unicodeScalars {
            if scalar.value >= 0x80 && isUnsafe(scalar) {
                let hex = String(scalar.value, radix: 16)
                escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// `{"key":value,…}` from ordered pairs of already-encoded JSON values.
    static func object(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { "\(jsonString($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    /// An aligned table for a terminal. Control characters in names and values are shown as
    /// escapes (`\n`, `\t`, `\r`, `\x1b`, …), so a value can neither break the layout nor
    /// send commands to the terminal.
    static func table(_ rows: [Row], columns: [String]? = nil, header showHeader: Bool = true, null: String = "NULL") -> String {
        let header = (columns ?? rows.first?.columns ?? []).map(escapingControlCharacters)
        if header.isEmpty { return "(no rows)\n" }
        let cells = rows.map { $0.values.map { $0.isNull ? null : escapingControlCharacters($0.description) } }
        var widths = header.map(\.count)
        for row in cells { for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) } }
        func line(_ values: [String]) -> String {
            let padded = zip(values, widths).map { $0 + String(repeating: " ", count: max(0, $1 - $0.count)) }.joined(separator: "  ")
            return String(padded.reversed().drop { $0 == " " }.reversed())
        }
        var text = showHeader ? line(header) + "\n" + line(widths.map { String(repeating: "-", count: $0) }) + "\n" : ""
        for row in cells { text += line(row) + "\n" }
        text += "(\(rows.count) row\(rows.count == 1 ? "" : "s"))\n"
        return text
    }

    /// `text` with every character a terminal may act on written as an escape: C0 control
    /// characters, DEL and C1 control characters as `\n`, `\t`, `\r`, and `\xHH` for the others
    /// (`\x1b` for ESC, `\x7f` for DEL); the bidirectional controls, which reorder what follows
    /// them on the line, as `\uHHHH` (`\u202e`). The one function for data shown to people.
    static func escapingControlCharacters(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\t": escaped += "\\t"
            case "\r": escaped += "\\r"
            case _ where isControl(scalar):
                let hex = String(scalar.value, radix: 16)
                escaped += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            case _ where isBidiControl(scalar): escaped += String(format: "\\u%04x", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// A message for a terminal (errors on stderr): control characters from the data it quotes
    /// written as escapes, as ``escapingControlCharacters(_:)`` does, but newlines and tabs kept.
    /// Its remedies are said as commands by the caller (``CommandHints``).
    static func escapingControlCharactersInMessage(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.split(separator: "\t", omittingEmptySubsequences: false).map { escapingControlCharacters(String($0)) }.joined(separator: "\t")
        }.joined(separator: "\n")
    }

    /// A one-line message for a log or standard error (a set-aside upload, a sync event): in the
    /// command's terms, with every character of the data it quotes that a terminal acts on
    /// written as an escape, newlines and tabs too, so that data can neither forge a line nor
    /// reorder one.
    static func line(_ text: String) -> String {
        escapingControlCharacters(CommandHints.inCommandTerms(text))
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value)
    }

    /// The Unicode bidirectional formatting characters: embeddings and overrides (U+202A–U+202E),
    /// isolates (U+2066–U+2069), the marks U+200E, U+200F and U+061C. Shown raw, they make a
    /// line read otherwise than its bytes (CVE-2021-42574).
    static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: return true
        default: return false
        }
    }

    /// A control or a bidirectional control: what never reaches a terminal raw.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool { isControl(scalar) || isBidiControl(scalar) }
}
