import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// A value's exact identity: storage class plus bits (so -0.0 differs from 0.0, 2.0 from 2).
func exact(_ value: DatabaseValue) -> String {
    switch value {
    case .null: return "null"
    case .integer(let i): return "integer \(i)"
    case .real(let d): return "real \(String(d.bitPattern, radix: 16)) (\(d))"
    case .text(let s): return "text \(Array(s.utf8).map { String($0, radix: 16) }.joined(separator: " ")) (\(s.debugDescription))"
    case .blob(let d): return "blob \(d.base64EncodedString())"
    }
}

/// Adversarial values (int64 limits, reals of every kind, text that looks like something else, NULL).
let adversarialValues: [JSONValue] = [
    .integer(.max), .integer(.min), .integer(0), .integer(-1),
    .double(2.0), .double(1000.0), .double(-0.0), .double(0.1), .double(0.30000000000000004),
    .double(5e-324), .double(2.2250738585072014e-308), .double(.greatestFiniteMagnitude), .double(-.greatestFiniteMagnitude),
    .double(-1.1545580616824966e+232), .double(1.4523142177899403e+308), .double(123456789.12345678), .double(1e16),
    .string(""), .string("007"), .string("a\u{0}b"), .string("\u{1}\t\n\r\u{1b}\u{7f}"), .string("{\"x\":1}"), .string("[1,2]"),
    .string("null"), .string("true"), .string("2.0"), .string("😀 Ünïcödé ☃ \u{301}e"), .string("'single' \"double\" \\ back"),
    .null,
]

@Suite struct ValueFidelityTests {
    static let schema = """
        {"tables":[{"name":"v","columns":[{"name":"t","type":"text"},{"name":"i","type":"integer"},{"name":"r","type":"real"},{"name":"x","type":"text"}]}]}
        """

    /// Every adversarial value, written by a `tandem exec` process into each column, reads back
    /// identically on the writer before and after sync and on another client; values written
    /// into the column of their own kind read back exactly as written.
    @Test func valuesReadBackIdenticallyEverywhereBeforeAndAfterSync() throws {
        let dir = try TemporaryDirectory()
        let schemaFile = dir.path("schema.json")
        try Self.schema.write(toFile: schemaFile, atomically: true, encoding: .utf8)
        let a = dir.path("a.db"), b = dir.path("b.db"), server = "sqlite:" + dir.path("server.db")
        for db in [a, b] { #expect(try runTandem(["init", db, "--schema", schemaFile]).status == 0) }
        for (index, value) in adversarialValues.enumerated() {
            let args = JSONValue.array([.string("r\(index)"), value, value, value, value]).jsonText
            let result = try runTandem(["exec", a, "INSERT INTO v(id, t, i, r, x) VALUES (?, ?, ?, ?, ?)", "--args-json", args])
            #expect(result.status == 0, "\(value): \(result.stderr)")
            // The same value through an UPDATE (a PATCH entry) of a row that held other values.
            let update = try runTandem(["exec", a, "INSERT INTO v(id, t, i, r, x) VALUES (?, 'x', 1, 1.5, 'y'); UPDATE v SET t = ?1, i = ?1, r = ?1, x = ?1 WHERE id = ?2",
                                        "--args-json", JSONValue.array([.string("u\(index)"), value, .string("u\(index)")]).jsonText])
            #expect(update.status == 0, "\(value): \(update.stderr)")
        }
        let query = "SELECT id, t, i, r, x FROM v ORDER BY id"
        func snapshot(_ path: String) throws -> [[String]] {
            try SharedDatabase(path: path).fetchAll(query).map { $0.values.map(exact) }
        }
        let before = try snapshot(a)
        #expect(before.count == 2 * adversarialValues.count)
        // The column of the value's own kind holds it exactly.
        let rows = try SharedDatabase(path: a).fetchAll(query)
        for (index, value) in adversarialValues.enumerated() {
            for prefix in ["r", "u"] {
            let row = try #require(rows.first { $0[0] == .text("\(prefix)\(index)") })
            switch value {
            case .string: #expect(exact(row[1]) == exact(value.databaseValue), "text column")
            case .integer: #expect(exact(row[2]) == exact(value.databaseValue), "integer column")
            case .double(let d):
                // An UPDATE through a view hands the trigger its new values with the column's
                // affinity applied, and SQLite's REAL affinity stores -0.0 as 0 (as in any plain
                // SQLite REAL column); an INSERT keeps the sign.
                let expected: DatabaseValue = prefix == "u" && d == 0 ? .real(0.0) : value.databaseValue
                #expect(exact(row[3]) == exact(expected), "real column")
            default: #expect(row[1] == .null && row[2] == .null && row[3] == .null)
            }
            }
        }
        #expect(try runTandem(["sync", a, "--backend", server]).status == 0)
        #expect(try runTandem(["sync", b, "--backend", server]).status == 0)
        let afterA = try snapshot(a), onB = try snapshot(b)
        for (index, row) in before.enumerated() {
            #expect(afterA[index] == row, "writer after sync")
            #expect(onB[index] == row, "other client")
        }
    }

    /// JSON text keeps each number's kind both ways.
    @Test func jsonValuesKeepTheirKind() throws {
        for value in adversarialValues + [.bool(true), .array([.double(2.0), .integer(2)]), .object(["a": .double(-0.0)])] {
            let text = JSONValue.array([value]).jsonText
            let parsed = try JSONValue(parsing: text)
            #expect(parsed.jsonText == text)
            if case .array(let values) = parsed, case .double(let d) = values[0], case .double(let original) = value {
                #expect(d.bitPattern == original.bitPattern)
            }
        }
        #expect(try JSONValue(parsing: "2.0") == .double(2.0))
        #expect(try JSONValue(parsing: "2") == .integer(2))
        #expect(try JSONValue(parsing: "-9223372036854775808") == .integer(.min))
        #expect(try JSONValue(parsing: "18446744073709551615") == .double(18446744073709551615.0))
    }
}

@Suite struct UpdateFidelityTests {
    let dir: TemporaryDirectory
    let schemaFile: String
    let db: String

    init() throws {
        dir = try TemporaryDirectory()
        schemaFile = dir.path("schema.json")
        db = dir.path("a.db")
    }

    func declare(title: String, n: String) throws -> (status: Int32, stdout: String, stderr: String) {
        try """
            {"tables":[{"name":"loc","columns":[{"name":"title","type":"\(title)"},{"name":"n","type":"\(n)"}]},
                       {"name":"mine","localOnly":true,"columns":[{"name":"title","type":"\(title)"},{"name":"n","type":"\(n)"}]}]}
            """.write(toFile: schemaFile, atomically: true, encoding: .utf8)
        return try runTandem(["init", db, "--schema", schemaFile])
    }

    func stored(_ table: String, _ id: String) throws -> String {
        try SharedDatabase(path: db).read { try $0.scalar("SELECT data FROM \(table) WHERE id = ?", [id]).stringValue ?? "" }
    }

    /// An UPDATE writes only the columns it changed: a column re-declared with another type keeps
    /// its stored text, and `tandem init` says which columns changed type.
    @Test func updatesLeaveUntouchedColumnsAsStored() throws {
        #expect(try declare(title: "text", n: "integer").status == 0)
        for table in ["loc", "mine"] {
            #expect(try runTandem(["exec", db, "INSERT INTO \(table)(id, title, n) VALUES ('x', 'keep me', 1)"]).status == 0)
        }
        let redeclared = try declare(title: "integer", n: "integer")
        #expect(redeclared.status == 0)
        #expect(redeclared.stdout.contains("loc.title changed type from text to integer"), "\(redeclared.stdout)")
        for table in ["loc", "mine"] {
            #expect(try runTandem(["exec", db, "UPDATE \(table) SET n = 2"]).status == 0)
        }
        #expect(try declare(title: "text", n: "integer").status == 0)
        let rows = try SharedDatabase(path: db).fetchAll("SELECT title, n FROM loc UNION ALL SELECT title, n FROM mine")
        #expect(rows.map { [$0[0], $0[1]] } == [[.text("keep me"), .integer(2)], [.text("keep me"), .integer(2)]])
        let patch = try SharedDatabase(path: db).crudTransactions(limit: 10).last?.entries.last
        #expect(patch?.op == .patch && patch?.data == ["n": .integer(2)])
    }

    /// A real stored in an integer column stays a real when another column is updated; local
    /// data equals what the CRUD entries say, and the server's row after sync.
    @Test func localDataEqualsTheUploadedRow() throws {
        #expect(try declare(title: "text", n: "integer").status == 0)
        #expect(try runTandem(["exec", db, "INSERT INTO loc(id, title, n) VALUES ('x', 'a', ?)", "--args-json", "[2.5]"]).status == 0)
        #expect(try runTandem(["exec", db, "UPDATE loc SET title = 'b'"]).status == 0)
        #expect(try runTandem(["exec", db, "UPDATE loc SET title = 'b'"]).status == 0)  // no change: no entry
        #expect(try JSONValue(parsing: stored("ps_data__loc", "x")) == JSONValue(parsing: #"{"n":2.5,"title":"b"}"#))
        let entries = try SharedDatabase(path: db).crudTransactions(limit: 10).flatMap(\.entries)
        #expect(entries.map(\.op) == [.put, .patch])
        #expect(entries.last?.data == ["title": .string("b")])
        let server = dir.path("server.db")
        #expect(try runTandem(["sync", db, "--backend", "sqlite:" + server]).status == 0)
        let serverRow = try EmbeddedBackend(path: server).rows().first { $0.id == "x" }
        #expect(try JSONValue(parsing: serverRow?.data ?? "") == JSONValue(parsing: try stored("ps_data__loc", "x")))
        #expect(try JSONValue(parsing: stored("ps_data__loc", "x")) == JSONValue(parsing: #"{"n":2.5,"title":"b"}"#))
    }

    /// A BLOB or an infinite real through a view is refused with the column named; nothing is written.
    @Test func valuesJSONCannotHoldAreRefusedNamingTheColumn() throws {
        #expect(try declare(title: "text", n: "integer").status == 0)
        let blob = try runTandem(["exec", db, "INSERT INTO loc(id, title) VALUES ('b', x'00ff')"])
        #expect(blob.status == 1)
        #expect(blob.stderr.contains("loc.title: a BLOB cannot be stored"), "\(blob.stderr)")
        let infinite = try runTandem(["exec", db, "INSERT INTO loc(id, n) VALUES ('i', 1e999)"])
        #expect(infinite.stderr.contains("loc.n: an infinite real cannot be stored"), "\(infinite.stderr)")
        #expect(try count(SharedDatabase(path: db), "SELECT count(*) FROM ps_data__loc") == 0)
    }
}

@Suite struct ConflictRuleTests {
    /// update racing a delete: the delete wins, whichever reaches the backend first; no client
    /// ever holds a row made of one client's column and NULLs, and all converge.
    @Test(arguments: [true, false])
    func aDeleteWinsOverAConcurrentUpdate(deleteFirst: Bool) throws {
        let f = try SyncFixture()
        try f.a.execute("INSERT INTO notes(id, title, done, score) VALUES ('r', 'first', 0, 1.5)")
        for db in [f.a, f.b, f.a] { #expect(try runTandem(["sync", db.path, "--backend", f.backendURL]).status == 0) }
        #expect(try count(f.b, "SELECT count(*) FROM notes WHERE id = 'r'") == 1)
        #expect(try runTandem(["exec", f.a.path, "DELETE FROM notes WHERE id = 'r'"]).status == 0)
        #expect(try runTandem(["exec", f.b.path, "UPDATE notes SET title = 'edited offline' WHERE id = 'r'"]).status == 0)
        let order = deleteFirst ? [f.a, f.b, f.a] : [f.b, f.a, f.b]
        for db in order { #expect(try runTandem(["sync", db.path, "--backend", f.backendURL]).status == 0) }
        for db in [f.a, f.b] {
            #expect(try count(db, "SELECT count(*) FROM notes WHERE id = 'r'") == 0, "\(db.path)")
        }
        #expect(try f.serverRows().isEmpty)
    }
}

@Suite struct CommandLineValueTests {
    /// ARGs bind as numbers only when the text reads back identically; --args-json gives types.
    @Test func argumentsThatLookLikeNumbersStayText() throws {
        #expect(bindValue("007") == .text("007"))
        #expect(bindValue("+5") == .text("+5"))
        #expect(bindValue("-0") == .text("-0"))
        #expect(bindValue("2.50") == .text("2.50"))
        #expect(bindValue("1e3") == .text("1e3"))
        #expect(bindValue("42") == .integer(42))
        #expect(bindValue("-9223372036854775808") == .integer(.min))
        #expect(bindValue("2.5") == .real(2.5))
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        for (id, word) in [("a", "007"), ("b", "+5"), ("c", "-0")] {
            #expect(try runTandem(["exec", db.path, "INSERT INTO notes(id, title) VALUES (?, ?)", id, word]).status == 0)
        }
        #expect(try runTandem(["exec", db.path, "INSERT INTO notes(id, title, done, score) VALUES ('d', ?, ?, ?)",
                               "--args-json", #"["2.0", 7, 2.0]"#]).status == 0)
        let rows = try db.fetchAll("SELECT title, typeof(done), score FROM notes ORDER BY id")
        #expect(rows.map { $0[0] } == [.text("007"), .text("+5"), .text("-0"), .text("2.0")])
        #expect(rows[3][1] == .text("integer") && exact(rows[3][2]) == exact(.real(2.0)))
        let bad = try runTandem(["exec", db.path, "SELECT ?", "--args-json", #"[{"a":1}]"#])
        #expect(bad.status == 2 && bad.stderr.contains("element 0 is an object"), "\(bad.stderr)")
    }

    /// An ARG that is not valid UTF-8 is an error, not U+FFFD, and nothing is written.
    @Test func invalidUTF8ArgumentsAreRefused() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let shell = try Spawned(executable: "/bin/sh", ["-c", "exec \"$0\" exec \"$1\" \"INSERT INTO notes(title) VALUES (?)\" \"$(printf 'ab\\377')\"",
                                                        tandemBinary, db.path])
        #expect(try shell.wait() == 2)
        #expect(shell.stderr.contains("not valid UTF-8"), "\(shell.stderr)")
        #expect(try count(db, "SELECT count(*) FROM notes") == 0)
    }
}

@Suite struct EarlySignalTests {
    /// True once `main` has begun: `tandem`'s first statements set up signal handling and ignore
    /// SIGPIPE (`SigIgn` in /proc). Before `main`, the kernel's default action applies to any program.
    static func mainHasBegun(_ pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigIgn:") }),
              let mask = UInt64(line.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespaces), radix: 16) else { return false }
        return mask & (1 << (UInt64(SIGPIPE) - 1)) != 0
    }

    /// SIGTERM or SIGINT at any moment of the first 100 ms after `main` starts (while the command
    /// is still opening the database) stops `tandem watch` and `tandem app` with exit 0.
    @Test func signalsDuringStartStopCleanly() throws {
        let f = try SyncFixture()
        for round in 0..<16 {
            let arguments = round % 2 == 0
                ? ["watch", f.a.path, "SELECT count(*) FROM notes"]
                : ["app", f.a.path, "--backend", f.backendURL]
            let child = try Spawned(arguments)
            try waitUntil("`tandem \(arguments[0])` to start") { Self.mainHasBegun(child.pid) || !child.isRunning }
            usleep(useconds_t((round * 6_700) % 100_000))  // the moment of the signal, spread over 0–100 ms
            child.signal(round % 4 < 2 ? SIGTERM : SIGINT)
            #expect(try child.wait() == 0, "round \(round): `\(child.command)`; stderr: \(child.stderr)")
        }
    }
}
