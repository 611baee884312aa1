import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// No character a terminal acts on (C0, DEL, C1, and the bidirectional controls that reorder a
/// line) reaches it raw from data: not in table, markdown or line output, not in JSON (escaped
/// as JSON allows), not in set-aside upload messages (`sync`, `app`, `crud`).
@Suite struct TerminalEscapeTests {
    static let controls = ControlCharacterOutputTests.controls
    static let bidi: [Unicode.Scalar] = (Array(0x202A...0x202E) + Array(0x2066...0x2069) + [0x200E, 0x200F, 0x061C]).map { Unicode.Scalar(UInt32($0))! }
    /// Every character that must not reach a terminal raw, NUL aside (SQL text cannot hold one).
    static let unsafe = Array(controls.dropFirst()) + bidi

    /// `c` between two letters.
    static func value(_ c: Unicode.Scalar) -> String { "a" + String(Character(c)) + "b" }

    /// How a message or a human output mode shows `c`.
    static func shown(_ c: Unicode.Scalar) -> String {
        bidi.contains(c) ? String(format: "\\u%04x", c.value) : ControlCharacterOutputTests.shown(c)
    }

    /// The characters of `text` that a terminal would act on, newlines aside.
    static func raw(_ text: String) -> [String] {
        Set(text.unicodeScalars.filter { $0 != "\n" && (controls.contains($0) || bidi.contains($0)) }).map { String(format: "U+%04X", $0.value) }.sorted()
    }

    @Test func humanModesEscapeBidiControlsAndJSONKeepsThemExactly() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("c.db"), schema: Schema(tables: [TableSchema(name: "t", columns: [.text("name")])]))
        try db.write { tx in
            for (index, c) in Self.bidi.enumerated() { try tx.execute("INSERT INTO t(id, name) VALUES (?, ?)", [String(format: "%03d", index), Self.value(c)]) }
        }
        let alias = "n" + String(String.UnicodeScalarView(Self.bidi)) + "m"
        let sql = "SELECT name AS \"\(alias)\" FROM t ORDER BY id"
        for command in ["query", "exec"] {
            for mode in ["table", "markdown", "line"] {
                let result = try runTandem([command, db.path, sql, "--mode", mode])
                #expect(result.status == 0)
                #expect(Self.raw(result.stdout).isEmpty, "\(command) --mode \(mode) printed \(Self.raw(result.stdout)) raw")
                for c in Self.bidi { #expect(result.stdout.contains("a" + Self.shown(c) + "b"), "\(command) --mode \(mode): U+\(String(format: "%04X", c.value))") }
                #expect(result.stdout.contains("n" + Self.bidi.map(Self.shown).joined() + "m"), "\(command) --mode \(mode): the column name")
            }
            let json = try runTandem([command, db.path, sql, "--json"])
            #expect(Self.raw(json.stdout).isEmpty, "\(command) --json printed \(Self.raw(json.stdout)) raw")
            #expect(try JSONValue(parsing: json.stdout) == .array(Self.bidi.map { .object([alias: .string(Self.value($0))]) }))
        }
    }

    @Test func crudListsSetAsideTransactionsWithEveryCharacterEscaped() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("c.db"), schema: notesSchema)
        for c in Self.unsafe {
            try db.execute("INSERT INTO notes(id, title) VALUES (?, ?)", [Self.value(c), Self.value(c)])
        }
        let queued = try db.uploadQueue.transactions(limit: .max)
        for (transaction, c) in zip(queued, Self.unsafe) {
            try db.setAside(transaction, error: "the server refused \(Self.value(c))", epoch: 0)
        }
        let listed = try tandem(["crud", db.path])
        #expect(listed.status == 0)
        #expect(Self.raw(listed.stdout).isEmpty, "tandem crud printed \(Self.raw(listed.stdout)) raw")
        for c in Self.unsafe { #expect(listed.stdout.contains("the server refused a" + Self.shown(c) + "b"), "U+\(String(format: "%04X", c.value))") }
        let json = try tandem(["crud", db.path, "--json"])
        #expect(Self.raw(json.stdout).isEmpty, "tandem crud --json printed \(Self.raw(json.stdout)) raw")
        guard case .array(let objects) = try JSONValue(parsing: json.stdout) else { Issue.record("not an array"); return }
        #expect(objects.count == Self.unsafe.count)
        for (object, c) in zip(objects, Self.unsafe) {
            guard case .object(let fields) = object else { continue }
            #expect(fields["row_id"] == .string(Self.value(c)))
            #expect(fields["error"] == .string("the server refused \(Self.value(c))"))
            guard case .object(let data)? = fields["data"] else { Issue.record("no data: \(object)"); continue }
            #expect(data["title"] == .string(Self.value(c)))
        }
    }
}

/// The same for the messages of uploads a real server refuses: `tandem sync` on standard
/// error, and `tandem app`'s log, plain and JSON.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct PostgresTerminalEscapeTests {
    @Test func setAsideMessagesShowEveryCharacterAsAnEscape() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let psql = try PostgresConnection(url)
        try psql.execute("ALTER TABLE notes ADD CONSTRAINT not_negative CHECK (done >= 0)")
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        for c in TerminalEscapeTests.unsafe {
            try db.execute("INSERT INTO notes(id, title, done) VALUES (?, ?, -1)", [TerminalEscapeTests.value(c), TerminalEscapeTests.value(c)])
        }
        let sync = try tandem(["sync", db.path, "--backend", url])
        #expect(sync.status == 1)
        #expect(TerminalEscapeTests.raw(sync.stderr).isEmpty, "tandem sync printed \(TerminalEscapeTests.raw(sync.stderr)) raw")
        for c in TerminalEscapeTests.unsafe {
            #expect(sync.stderr.contains("a" + TerminalEscapeTests.shown(c) + "b"), "U+\(String(format: "%04X", c.value)): \(sync.stderr.prefix(300))")
        }
        #expect(try db.uploadQueue.rejected().count == TerminalEscapeTests.unsafe.count)
        for json in [false, true] {
            let prefix = json ? "j" : "p"
            for c in TerminalEscapeTests.unsafe {
                try db.execute("INSERT INTO notes(id, title, done) VALUES (?, 'x', -1)", [prefix + TerminalEscapeTests.value(c)])
            }
            let app = try Spawned(["app", db.path, "--backend", url] + (json ? ["--json"] : []))
            try waitUntil("every set-aside event") { app.output.filter { $0.contains("set aside") }.count >= TerminalEscapeTests.unsafe.count }
            app.signal(SIGTERM)
            try app.wait()
            let log = app.output.joined(separator: "\n") + app.stderr
            #expect(TerminalEscapeTests.raw(log).isEmpty, "tandem app\(json ? " --json" : "") printed \(TerminalEscapeTests.raw(log)) raw")
            for c in TerminalEscapeTests.unsafe {
                // JSON escapes as JSON does; a plain log line as a message does.
                let shown = json ? JSONValue.string(String(Character(c))).jsonText.dropFirst().dropLast().lowercased() : TerminalEscapeTests.shown(c)
                let expected = json && c.value >= 0x80 ? String(format: "\\u%04x", c.value) : String(shown)
                #expect(log.contains(prefix + "a" + expected + "b"), "U+\(String(format: "%04X", c.value)) in tandem app\(json ? " --json" : "")")
            }
        }
    }
}
