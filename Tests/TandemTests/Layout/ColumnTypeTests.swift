import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// Declared column types are enforced by one rule on every write path: generated values of every
/// kind, written into columns of every type, are stored as ``ColumnRule`` says or refused naming
/// the table, the column and the value; what a view reads, the stored row and the CRUD entry agree.
@Suite struct ColumnTypeTests {
    static let schema = Schema(tables: [
        TableSchema(name: "ints", columns: [.integer("x")]),
        TableSchema(name: "reals", columns: [.real("x")]),
        TableSchema(name: "texts", columns: [.text("x")]),
    ])
    static let types: [(table: String, type: ColumnSchema.ColumnType)] = [("ints", .integer), ("reals", .real), ("texts", .text)]
    static let values = ColumnRule.generatedValues()

    let dir: TemporaryDirectory
    init() throws { dir = try TemporaryDirectory() }

    /// What each path left: per table, per row id, the value written (nil: refused).
    typealias Outcome = [String: [String: DatabaseValue?]]

    /// Checks that every value was stored as the rule says, or refused, and that the view, the
    /// stored row and the upload queue agree on it. `update`: the rows were inserted with NULL
    /// and then updated (a PATCH entry only when the value changed).
    func verify(_ path: String, _ db: SharedDatabase, update: Bool = false, file: String = #fileID, line: Int = #line) throws {
        let entries = try db.uploadQueue.transactions(limit: 100_000).flatMap(\.entries)
        for (table, type) in Self.types {
            let read = Dictionary(uniqueKeysWithValues: try db.fetchAll("SELECT id, x FROM \(table)").map { ($0[0].stringValue!, $0[1]) })
            let stored = try db.read { tx in
                try tx.fetchAll("SELECT id, data FROM ps_data__\(table)").map { ($0[0].stringValue!, try JSONValue(parsing: $0[1].stringValue!)) }
            }
            let storedByID = Dictionary(uniqueKeysWithValues: stored)
            var queued: [String: JSONValue] = [:]
            for entry in entries where entry.table == table && entry.op == (update ? .patch : .put) { queued[entry.rowID] = entry.data?["x"] }
            var mismatches: [String] = []
            for (n, value) in Self.values.enumerated() {
                let id = "v\(n)"
                let expected = ColumnRule.stored(value, in: type)
                let shown = "\(table) \(exact(value)) -> \(expected.map(exact) ?? "refused")"
                if let expected {
                    guard let got = read[id] else { mismatches.append("\(shown): no row"); continue }
                    if exact(got) != exact(expected) { mismatches.append("\(shown): view reads \(exact(got))") }
                    let inRow: JSONValue = if case .object(let o) = storedByID[id] { o["x"] ?? .null } else { .string("no stored row") }
                    if exact(inRow.databaseValue) != exact(expected) { mismatches.append("\(shown): stored \(inRow.jsonText)") }
                    let expectEntry = !(update && expected == .null)
                    if expectEntry, exact(queued[id]?.databaseValue ?? .text("no entry")) != exact(expected) {
                        mismatches.append("\(shown): queued \(queued[id]?.jsonText ?? "nothing")")
                    }
                    if !expectEntry, queued[id] != nil { mismatches.append("\(shown): an unchanged value was queued") }
                } else if update {
                    if read[id] != .null || queued[id] != nil { mismatches.append("\(shown): refused but the row changed") }
                } else if read[id] != nil || storedByID[id] != nil || queued[id] != nil {
                    mismatches.append("\(shown): refused but a row or an entry exists")
                }
            }
            #expect(
                mismatches.isEmpty, "\(path): \(mismatches.count) of \(Self.values.count) values differ from the rule, e.g. \(mismatches.prefix(6))",
                sourceLocation: SourceLocation(fileID: file, filePath: file, line: line, column: 1))
        }
    }

    /// Checks a refusal's message: the table, the column and the value, no internal name. An
    /// UPDATE hands the trigger an integer column's value as SQLite's INTEGER affinity reads it
    /// (`'1e400'` as a real), so a converted text is named as that.
    func checkRefusal(_ error: any Error, table: String, value: DatabaseValue, asWritten: Bool = true) {
        let message = (error as? SQLiteError)?.message ?? (error as? TandemError).map { "\($0)" } ?? "\(error)"
        #expect(message.hasPrefix("\(table).x") || message.contains(" \(table).x"), "\(exact(value)): \(message)")
        #expect(!message.contains("ps_"), "\(message)")
        guard !message.contains("an infinite real") else { return }  // text such as '1e400'
        switch value {
        case .integer(let i): #expect(message.contains(String(i)), "the value is named: \(message)")
        case .text(let s) where asWritten && !s.contains("\u{0}"):
            #expect(message.contains("\"" + String(s.prefix(40))), "the value is named: \(message)")
        default: break
        }
    }

    @Test func theViewsStoreWhatTheRuleSaysOnInsertAndUpdate() throws {
        let inserted = try SharedDatabase(path: dir.path("insert.db"), schema: Self.schema)
        let updated = try SharedDatabase(path: dir.path("update.db"), schema: Self.schema)
        for (table, _) in Self.types {
            try inserted.write { tx in
                for (n, value) in Self.values.enumerated() {
                    do { try tx.execute("INSERT INTO \(table)(id, x) VALUES (?, ?)", ["v\(n)", value]) } catch {
                        checkRefusal(error, table: table, value: value)
                    }
                }
            }
            try updated.write { tx in
                _ = try tx.insert(into: table, columns: ["id"], rows: Self.values.indices.map { [.text("v\($0)")] })
            }
            try updated.write { tx in
                for (n, value) in Self.values.enumerated() {
                    do { try tx.execute("UPDATE \(table) SET x = ? WHERE id = ?", [value, "v\(n)"]) } catch {
                        checkRefusal(error, table: table, value: value, asWritten: table != "ints")
                    }
                }
            }
        }
        try verify("INSERT through the view", inserted)
        try verify("UPDATE through the view", updated, update: true)
    }

    /// An UPDATE over a stored value stores what the rule says and queues a PATCH exactly when
    /// the stored value changes (a real by its sign too): every generated value over values that
    /// read alike but differ (`0.0` and `-0.0`, `0` and `'0'`), as well as over NULL above.
    @Test func anUpdateOverAStoredValueChangesItExactlyWhenTheRuleSays() throws {
        let db = try SharedDatabase(path: dir.path("over.db"), schema: Self.schema)
        let befores: [DatabaseValue] = [.real(0.0), .real(-0.0), .integer(0), .text("0"), .text("-0"), .integer(5), .text("x")]
        var mismatches: [String] = []
        for (table, type) in Self.types {
            try db.write { tx in
                for before in befores {
                    guard let stored = ColumnRule.stored(before, in: type) else { continue }
                    for (n, value) in Self.values.enumerated() {
                        let id = "\(exact(before))-\(n)", change = "\(table) \(exact(stored)) -> \(exact(value))"
                        try tx.execute("INSERT INTO \(table)(id, x) VALUES (?, ?)", [id, before])
                        let entries = { try tx.scalar("SELECT coalesce(max(id), 0) FROM \(InternalTables.crud)").int64Value ?? 0 }
                        let queuedBefore = try entries()
                        let expected = ColumnRule.stored(value, in: type)
                        do {
                            try tx.execute("UPDATE \(table) SET x = ? WHERE id = ?", [value, id])
                            if expected == nil { mismatches.append("\(change): stored, not refused") }
                        } catch {
                            if expected != nil { mismatches.append("\(change): refused (\(error))") }
                        }
                        let now = try tx.fetchAll("SELECT x FROM \(table) WHERE id = ?", [id]).first?[0]
                        let after = expected ?? stored
                        if now.map(exact) != exact(after) { mismatches.append("\(change): reads \(now.map(exact) ?? "no row"), not \(exact(after))") }
                        let patched = try entries() > queuedBefore
                        if patched != (exact(after) != exact(stored)) {
                            mismatches.append("\(change): \(patched ? "a PATCH for an unchanged value" : "no PATCH for a change")")
                        }
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) updates differ from the rule, e.g. \(mismatches.prefix(6))")
    }

    @Test func theBulkPathStoresWhatTheViewsStore() throws {
        let db = try SharedDatabase(path: dir.path("bulk.db"), schema: Self.schema)
        for (table, _) in Self.types {
            for (n, value) in Self.values.enumerated() {
                do { _ = try db.write { tx in try tx.insert(into: table, columns: ["id", "x"], rows: [[.text("v\(n)"), value]]) } } catch {
                    checkRefusal(error, table: table, value: value)
                }
            }
        }
        try verify("bulk insert", db)
    }

    /// The `sqlite3` shell, alone and under `tandem run`, writes through the same triggers: the
    /// values come from a plain table, so they reach the views exactly as generated.
    @Test func theShellStoresWhatTheRuleSays() throws {
        for (name, underRun) in [("shell", false), ("run", true)] {
            let path = dir.path("\(name).db")
            let db = try SharedDatabase(path: path, schema: Self.schema)
            try db.write { tx in
                try tx.execute("CREATE TABLE source(n INTEGER PRIMARY KEY, v)")
                for (n, value) in Self.values.enumerated() { try tx.execute("INSERT INTO source(n, v) VALUES (?, ?)", [n, value]) }
            }
            var script = ""
            for (table, _) in Self.types {
                for n in Self.values.indices { script += "INSERT INTO \(table)(id, x) SELECT 'v' || n, v FROM source WHERE n = \(n);\n" }
            }
            let file = dir.path("\(name).sql")
            try script.write(toFile: file, atomically: true, encoding: .utf8)
            let command = underRun ? [tandemBinary, "run", path, "--", "/usr/bin/sqlite3", path, ".read \(file)"] : ["/usr/bin/sqlite3", path, ".read \(file)"]
            let shell = try Spawned(executable: command[0], Array(command.dropFirst()))
            _ = try shell.wait()
            let refusals = Self.types.map { type in Self.values.filter { ColumnRule.stored($0, in: type.type) == nil }.count }.reduce(0, +)
            let errors = shell.stderr.split(separator: "\n").filter { $0.hasPrefix("Runtime error") }
            #expect(errors.count == refusals, "\(name): \(errors.count) errors for \(refusals) refusals: \(errors.prefix(3))")
            #expect(errors.allSatisfy { $0.contains("ints.x") || $0.contains("reals.x") || $0.contains("texts.x") }, "\(errors.prefix(3))")
            try verify(name, db)
        }
    }

    /// `tandem exec` refuses as the library does, naming the table, the column and the value,
    /// and leaves the file as it was.
    @Test func execRefusesInTheUsersTerms() throws {
        let path = dir.path("exec.db")
        _ = try SharedDatabase(path: path, schema: Self.schema)
        let cases: [(String, String)] = [
            ("INSERT INTO ints(id, x) VALUES ('a', 2.5)", "ints.x is an integer column: 2.5 (real) does not convert to an integer exactly"),
            ("INSERT INTO ints(id, x) VALUES ('a', '12abc')", #"ints.x is an integer column: "12abc" (text) does not convert to an integer exactly"#),
            ("INSERT INTO ints(id, x) VALUES ('a', 9223372036854775808)", "ints.x is an integer column: 9.2233720368547758e+18 (real)"),
            ("INSERT INTO reals(id, x) VALUES ('a', 'abc')", #"reals.x is a real column: "abc" (text) does not convert to a real exactly"#),
            ("INSERT INTO reals(id, x) VALUES ('a', 9007199254740993)", "reals.x is a real column: 9007199254740993 (integer)"),
            ("INSERT INTO texts(id, x) VALUES ('a', 0.30000000000000004)", "texts.x is a text column: 0.30000000000000004 (real)"),
        ]
        // The database and its WAL (the write lock's record of holders changes with every command).
        let files = { try listing(self.dir.path("")).filter { $0.key.hasSuffix(".db") || $0.key.hasSuffix(".db-wal") } }
        for (sql, message) in cases {
            let before = try files()
            let result = try runTandem(["exec", path, sql])
            #expect(result.status == 1 && result.stderr.contains(message), "\(sql): \(result.stderr)")
            #expect(!result.stderr.contains("ps_") && !result.stderr.contains("JSON path"), "\(result.stderr)")
            #expect(try files() == before, "a refused command changed the database")
        }
        let accepted = try runTandem([
            "exec", path, "INSERT INTO ints(id, x) VALUES ('b', 2.0), ('c', '12'); INSERT INTO reals(id, x) VALUES ('b', 3); INSERT INTO texts(id, x) VALUES ('b', 42), ('c', 2.5)",
        ])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        let db = try SharedDatabase(path: path)
        #expect(try db.fetchAll("SELECT x FROM ints ORDER BY id").map { $0[0] } == [.integer(2), .integer(12)])
        #expect(try db.fetchAll("SELECT x FROM reals").map { exact($0[0]) } == [exact(.real(3))])
        #expect(try db.fetchAll("SELECT x FROM texts ORDER BY id").map { $0[0] } == [.text("42"), .text("2.5")])
    }

    /// An import applies the same rule to each JSON value, so an import of what the rule stores
    /// is a no-op; a value the rule refuses rejects the payload, naming the element and key.
    @Test func importAppliesTheSameRule() throws {
        let db = try SharedDatabase(path: dir.path("import.db"), schema: Self.schema)
        var imported = 0
        for (table, type) in Self.types {
            var accepted: [JSONValue] = []
            for (n, value) in Self.values.enumerated() {
                let json: JSONValue
                switch value {
                case .null: json = .null
                case .integer(let i): json = .integer(i)
                case .real(let d) where d.isFinite: json = .double(d)
                case .text(let s): json = .string(s)
                default: continue
                }
                // A date string in a real column is the import's own reading of text.
                if case .text(let s) = value, type == .real, (try? ISO8601Timestamp.secondsSince1970(s)) != nil { continue }
                let element = JSONValue.object(["id": .string("v\(n)"), "x": json])
                if ColumnRule.stored(value, in: type) != nil {
                    accepted.append(element)
                } else {
                    #expect(throws: TandemError.self, "\(table) \(exact(value))") {
                        try db.importJSON(Data(JSONValue.array([element]).jsonText.utf8), into: table)
                    }
                }
            }
            imported += accepted.count
            let result = try db.importJSON(Data(JSONValue.array(accepted).jsonText.utf8), into: table)
            #expect(result.tables[table]?.inserted == accepted.count)
            let again = try db.importJSON(Data(JSONValue.array(accepted).jsonText.utf8), into: table)
            #expect(again.tables[table]?.unchanged == accepted.count, "importing the same values again changes nothing")
            for element in accepted {
                guard case .object(let o) = element, case .string(let id) = o["id"], let x = o["x"] else { continue }
                let stored = try db.fetchAll("SELECT x FROM \(table) WHERE id = ?", [id]).first?[0]
                #expect(stored.map(exact) == ColumnRule.stored(x.databaseValue, in: type).map(exact), "\(table) \(x.jsonText)")
            }
        }
        #expect(try db.uploadQueue.pendingCount() == imported)
    }
}
