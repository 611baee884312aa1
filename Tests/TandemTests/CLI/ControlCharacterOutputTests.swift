import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// Every control character (C0 U+0000–U+001F, DEL U+007F, C1 U+0080–U+009F), in values and in
/// column names, in every output mode: table, markdown and line show escapes; tsv escapes so
/// that every field reads back exactly; json and ndjson escape as JSON does; csv keeps every
/// character. No mode but csv lets one reach the terminal raw, nor does an error message.
@Suite struct ControlCharacterOutputTests {
    static let controls: [Unicode.Scalar] = (Array(0x00...0x1F) + [0x7F] + Array(0x80...0x9F)).map { Unicode.Scalar(UInt32($0))! }

    /// The value stored for control `c`: it between two letters, and a backslash.
    static func value(_ c: Unicode.Scalar) -> String { "a" + String(Character(c)) + "b\\" }

    /// Every control but NUL (SQL text cannot hold one) in one column name.
    static let alias = "n" + String(String.UnicodeScalarView(controls.dropFirst())) + "m"

    /// How table, markdown and line modes show `c`.
    static func shown(_ c: Unicode.Scalar) -> String {
        switch c {
        case "\n": return "\\n"
        case "\t": return "\\t"
        case "\r": return "\\r"
        default: return String(format: "\\x%02x", c.value)
        }
    }

    let dir: TemporaryDirectory
    let db: SharedDatabase

    init() throws {
        dir = try TemporaryDirectory()
        db = try SharedDatabase(path: dir.path("c.db"), schema: Schema(tables: [TableSchema(name: "t", columns: [.text("name")])]))
        try db.write { tx in
            for (index, c) in Self.controls.enumerated() {
                try tx.execute("INSERT INTO t(id, name) VALUES (?, ?)", [String(format: "%03d", index), Self.value(c)])
            }
        }
    }

    /// The exact bytes `tandem query` writes in `mode`.
    func output(_ mode: String) throws -> String {
        let child = try Subprocess.spawn(tandemBinary, ["query", db.path, "SELECT name AS \"\(Self.alias)\" FROM t ORDER BY id", "--mode", mode])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(child.stdoutFD, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += buffer.prefix(n)
        }
        close(child.stdoutFD)
        close(child.stderrFD)
        #expect(child.wait() == 0, "--mode \(mode)")
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The control characters in `text` other than those in `allowed`.
    func raw(_ text: String, allowing allowed: Set<Unicode.Scalar> = ["\n"]) -> [UInt32] {
        text.unicodeScalars.filter { Self.controls.contains($0) && !allowed.contains($0) }.map(\.value)
    }

    @Test func humanModesShowEveryControlCharacterAsAnEscape() throws {
        for mode in ["table", "markdown", "line"] {
            let text = try output(mode)
            #expect(raw(text).isEmpty, "--mode \(mode) printed raw control characters \(Set(raw(text)).sorted())")
            for c in Self.controls {
                #expect(text.contains("a" + Self.shown(c) + "b"), "--mode \(mode) does not show U+\(String(format: "%04X", c.value)) as \(Self.shown(c))")
            }
            #expect(text.contains("n" + Self.controls.dropFirst().map(Self.shown).joined() + "m"), "--mode \(mode): the column name")
        }
    }

    @Test func tsvEscapesSoThatEveryFieldReadsBackExactly() throws {
        let text = try output("tsv")
        #expect(raw(text, allowing: ["\n", "\t"]).isEmpty, "raw control characters \(Set(raw(text, allowing: ["\n", "\t"])).sorted())")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        #expect(lines.map { Self.unescapeTSV($0) } == [Self.alias] + Self.controls.map(Self.value))
    }

    @Test func csvAndJSONKeepEveryCharacter() throws {
        let csv = try output("csv")
        #expect(Self.parseCSV(csv) == [[Self.alias]] + Self.controls.map { [Self.value($0)] })
        let json = try output("json")
        #expect(raw(json).isEmpty, "--mode json printed raw control characters \(Set(raw(json)).sorted())")
        #expect(try JSONValue(parsing: json) == .array(Self.controls.map { .object([Self.alias: .string(Self.value($0))]) }))
        let ndjson = try output("ndjson")
        #expect(raw(ndjson).isEmpty, "--mode ndjson printed raw control characters")
        let lines = ndjson.split(separator: "\n").map(String.init)
        #expect(try lines.map { try JSONValue(parsing: $0) } == Self.controls.map { .object([Self.alias: .string(Self.value($0))]) })
    }

    @Test func errorMessagesShowControlCharactersAsEscapes() throws {
        for c in Self.controls.dropFirst() where c != "\n" && c != "\t" {
            let result = try tandem(["query", db.path, "SELECT * FROM \"x\(String(Character(c)))y\""])
            #expect(result.status == 1)
            #expect(
                raw(result.stderr).isEmpty && result.stderr.contains("x" + Self.shown(c) + "y"),
                "U+\(String(format: "%04X", c.value)): \(result.stderr.debugDescription)")
        }
    }

    /// A TSV field with `\\`, `\t`, `\n`, `\r` and `\xHH` read back.
    static func unescapeTSV(_ field: String) -> String {
        var result = ""
        var scalars = Array(field.unicodeScalars)[...]
        while let scalar = scalars.popFirst() {
            guard scalar == "\\", let next = scalars.popFirst() else { result.unicodeScalars.append(scalar); continue }
            switch next {
            case "t": result += "\t"
            case "n": result += "\n"
            case "r": result += "\r"
            case "x":
                let hex = String(String.UnicodeScalarView(scalars.prefix(2)))
                scalars = scalars.dropFirst(2)
                result.unicodeScalars.append(Unicode.Scalar(UInt32(hex, radix: 16)!)!)
            default: result.unicodeScalars.append(next)
            }
        }
        return result
    }

    /// RFC 4180 records (CRLF between them, quoted fields with doubled quotes).
    static func parseCSV(_ text: String) -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false
        var scalars = Array(text.unicodeScalars)[...]
        while let scalar = scalars.popFirst() {
            if quoted {
                if scalar == "\"" {
                    if scalars.first == "\"" { field += "\""; scalars = scalars.dropFirst() } else { quoted = false }
                } else {
                    field.unicodeScalars.append(scalar)
                }
            } else if scalar == "\"" {
                quoted = true
            } else if scalar == "," {
                record.append(field)
                field = ""
            } else if scalar == "\r" && scalars.first == "\n" {
                scalars = scalars.dropFirst()
                record.append(field)
                records.append(record)
                record = []
                field = ""
            } else {
                field.unicodeScalars.append(scalar)
            }
        }
        return records
    }
}
