import Foundation
import Testing
@testable import Tandem

/// `insert(into:columns:rows:)` builds row JSON in Swift and writes the data table and the
/// upload queue directly; it must store and queue exactly what inserts through the view do.
@Suite struct BulkInsertTests {
    static let schema = Schema(tables: [
        TableSchema(name: "synced", columns: [.integer("i"), .real("r"), .text("t")]),
        TableSchema(name: "local", columns: [.integer("i"), .real("r"), .text("t")], localOnly: true),
        TableSchema(name: "events", columns: [.integer("i"), .real("r"), .text("t")], insertOnly: true),
    ])

    /// Adversarial values, each tried in every column.
    static var values: [DatabaseValue] {
        var values: [DatabaseValue] = [
            .null, .integer(.min), .integer(.max), .integer(0), .integer(-1), .integer(2),
            .real(2.0), .real(-0.0), .real(0.0), .real(0.1), .real(1e300), .real(-1e-300), .real(.leastNonzeroMagnitude), .real(.greatestFiniteMagnitude),
            .real(0.30000000000000004), .real(1.0 / 3.0), .real(123456789012345680), .real(1e16), .real(1e-5), .real(.nan),
            .text(""), .text("\u{0}"), .text("a\u{0}b"), .text("\u{1}\u{8}\u{9}\u{a}\u{c}\u{d}\u{1f}\u{7f}"), .text("\"quoted\" \\ back"),
            .text("{\"json\": [1, 2.0]}"), .text("2.0"), .text("null"), .text("ü 日本 😀 \u{2028}"), .text("\u{e000}1"),
        ]
        var random = SeededRandom(seed: 0xb01c)
        for _ in 0..<400 {
            let d = Double(bitPattern: random.next())
            if d.isFinite { values.append(.real(d)) }
        }
        return values
    }

    /// Rows: every value in each column that takes it (``ColumnRule``; NULL in the others), ids
    /// given, minted (NULL) or integers.
    static var rows: [[DatabaseValue]] {
        var rows: [[DatabaseValue]] = []
        let taken = { (value: DatabaseValue, type: ColumnSchema.ColumnType) in ColumnRule.stored(value, in: type) == nil ? DatabaseValue.null : value }
        for (n, value) in values.enumerated() {
            rows.append([.text("v\(n)"), taken(value, .integer), taken(value, .real), taken(value, .text)])
            rows.append([.text("w\(n)"), .integer(Int64(n)), taken(value, .real), .text("x")])
        }
        rows.append([.integer(77), .null, .null, .null])
        return rows
    }

    @Test func theDirectPathStoresAndQueuesWhatTheViewDoes() throws {
        let dir = try TemporaryDirectory()
        let viaView = try SharedDatabase(path: dir.path("view.db"), schema: Self.schema)
        let direct = try SharedDatabase(path: dir.path("direct.db"), schema: Self.schema)
        let rows = Self.rows
        for table in ["synced", "local", "events"] {
            try viaView.write { tx in
                for row in rows { try tx.execute("INSERT INTO \(table)(id, i, r, t) VALUES (?, ?, ?, ?)", row) }
            }
            let ids = try direct.write { tx in try tx.insert(into: table, columns: ["id", "i", "r", "t"], rows: rows) }
            #expect(ids.count == rows.count && ids.last == "77")
            let stored = try zip(exact(viaView.fetchAll("SELECT * FROM \(table) ORDER BY id")), exact(direct.fetchAll("SELECT * FROM \(table) ORDER BY id")))
            let differing = stored.filter { $0 != $1 }
            #expect(differing.isEmpty, "\(table): stored rows differ (view, direct): \(differing.prefix(4))")
        }
        let viewEntries = try viaView.uploadQueue.transactions(limit: 100).flatMap(\.entries)
        let directEntries = try direct.uploadQueue.transactions(limit: 100).flatMap(\.entries)
        #expect(viewEntries.count == 2 * rows.count, "synced and events queue every row; local queues none")
        #expect(viewEntries.map(\.transactionID) == directEntries.map(\.transactionID))
        let describe = { (entry: CrudEntry) in "\(entry.op) \(entry.table) \(entry.rowID) \(entry.data.map { JSONValue.object($0).jsonText } ?? "-")" }
        let differing = zip(viewEntries.map(describe), directEntries.map(describe)).filter { $0 != $1 }
        #expect(differing.isEmpty, "CRUD entries differ (view, direct): \(differing.prefix(4))")
    }

    /// A value a column refuses is refused by both paths with the same words, on every kind of table.
    @Test func bothPathsRefuseAlike() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("alike.db"), schema: Self.schema)
        var refusals = 0
        for table in ["synced", "local", "events"] {
            for (n, value) in (Self.values + [.blob(Data([1])), .real(.infinity)]).enumerated() {
                for (column, type) in [("i", ColumnSchema.ColumnType.integer), ("r", .real), ("t", .text)] where ColumnRule.stored(value, in: type) == nil {
                    refusals += 1
                    var viaView = "accepted", direct = "accepted"
                    var viaViewRefusal: ValueRefusal?, directRefusal: ValueRefusal?
                    do { try db.write { tx in try tx.execute("INSERT INTO \(table)(id, \(column)) VALUES (?, ?)", ["v\(n)", value]) } } catch let error as SQLiteError {
                        viaView = error.message
                        viaViewRefusal = error.refusal
                    }
                    do { _ = try db.write { tx in try tx.insert(into: table, columns: ["id", column], rows: [[.text("v\(n)"), value]]) } } catch TandemError.invalidValue(
                        let refusal)
                    {
                        direct = refusal.message
                        directRefusal = refusal
                    }
                    #expect(viaView == direct && viaView.hasPrefix("\(table).\(column)"), "\(table).\(column) \(value)")
                    #expect(viaViewRefusal == ValueRefusal(table: table, column: column, message: viaView), "\(table).\(column) \(value)")
                    #expect(directRefusal == ValueRefusal(table: table, column: column, rowID: "v\(n)", message: direct), "\(table).\(column) \(value)")
                }
            }
        }
        #expect(refusals > 100)
        #expect(try db.uploadQueue.pendingCount() == 0)
    }

    @Test func refusedRowsNameTheTableAndColumn() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("refused.db"), schema: Self.schema)
        try db.write { tx in try tx.insert(into: "synced", columns: ["id", "t"], rows: [[.text("a"), .text("x")]]) }
        #expect(
            throws: TandemError.invalidValue(
                ValueRefusal(
                    table: "synced", column: "r", rowID: "b",
                    message: "synced.r: a BLOB cannot be stored in a Tandem table (JSON holds no bytes); store it as text, for example hex(value) or base64"))
        ) {
            try db.write { tx in try tx.insert(into: "synced", columns: ["id", "r"], rows: [[.text("b"), .blob(Data([1]))]]) }
        }
        do {
            try db.write { tx in _ = try tx.insert(into: "synced", columns: ["r"], rows: [[.real(.infinity)]]) }
            Issue.record("an infinite real was accepted")
        } catch TandemError.invalidValue(let refusal) {
            // No id given: the one minted for the row names nothing the caller knows.
            #expect(refusal == ValueRefusal(table: "synced", column: "r", message: "synced.r: an infinite real cannot be stored (JSON has no representation for it)"))
        }
        #expect(throws: TandemError.invalidArguments("table synced has no column named nope")) {
            try db.write { tx in try tx.insert(into: "synced", columns: ["nope"], rows: [[.null]]) }
        }
        #expect(throws: TandemError.invalidArguments("synced.id must be a non-empty text")) {
            try db.write { tx in try tx.insert(into: "synced", columns: ["id"], rows: [[.text("")]]) }
        }
        #expect(throws: TandemError.invalidArguments("no table named missing is declared in '\(db.path)'")) {
            try db.write { tx in try tx.insert(into: "missing", columns: [], rows: [[]]) }
        }
        do {
            try db.write { tx in try tx.insert(into: "synced", columns: ["id"], rows: (0..<100).map { [.text($0 == 70 ? "a" : "n\($0)")] }) }
            Issue.record("a duplicate id was accepted")
        } catch let error as SQLiteError {
            #expect(error.message == "a row with id 'a' already exists in table synced")
            #expect(!error.description.contains("ps_"), "\(error)")
        }
        do {
            try db.write { tx in try tx.insert(into: "synced", columns: ["id"], rows: [[.text("d")], [.text("e")], [.text("d")]]) }
            Issue.record("a duplicate id within one call was accepted")
        } catch let error as SQLiteError {
            #expect(error.message == "a row with id 'd' already exists in table synced")
            #expect(error.code == .constraint)
        }
        #expect(try db.fetchAll("SELECT id FROM synced").count == 1, "a refused write leaves nothing")
        #expect(try db.uploadQueue.pendingCount() == 1)
    }

    /// A refused bulk insert names what the view, writing row by row, would have refused
    /// first: the first duplicate id in row order (ids compared byte for byte, as SQLite does),
    /// before a bad row that follows it; and the whole call's row count in its statement.
    @Test func theFirstRefusedRowIsTheOneNamed() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("first.db"), schema: Self.schema)
        try db.write { tx in
            try tx.insert(into: "synced", columns: ["id"], rows: [[.text("z")]])
            try tx.insert(into: "local", columns: ["id"], rows: [[.text("z")]])
        }
        let refused = { (table: String, columns: [String], rows: [[DatabaseValue]]) throws -> any Error in
            do {
                try db.write { tx in try tx.insert(into: table, columns: columns, rows: rows) }
            } catch { return error }
            throw TestFailure("\(table): \(rows.count) rows with a duplicate id were accepted")
        }
        // Two repeats across the batch's rows: the first of them.
        let spread: [[DatabaseValue]] = [[.text("a")], [.text("b")]] + (0..<30).map { [.text("x\($0)")] } + [[.text("a")], [.text("b")]]
        for table in ["synced", "local"] {
            let error = try refused(table, ["id"], spread) as? SQLiteError
            #expect(error?.message == "a row with id 'a' already exists in table \(table)")
            #expect(error?.sql?.hasSuffix("(34 rows)") == true, "\(String(describing: error?.sql))")
        }
        // A repeat in the second batch of a call: the statement counts the call's rows.
        let second = try refused("synced", ["id"], (0..<33).map { [.text($0 == 32 ? "x0" : "x\($0)")] }) as? SQLiteError
        #expect(second?.message == "a row with id 'x0' already exists in table synced")
        #expect(second?.sql?.hasSuffix("(33 rows)") == true, "\(String(describing: second?.sql))")
        // A duplicate before a BLOB: the duplicate, as the view would have stopped there.
        let beforeBlob = try refused("synced", ["id", "r"], [[.text("a"), .integer(1)], [.text("a"), .integer(2)], [.text("b"), .blob(Data([1]))]])
        #expect((beforeBlob as? SQLiteError)?.message == "a row with id 'a' already exists in table synced", "\(beforeBlob)")
        // Canonically equal but different bytes are different ids to SQLite: the stored one is named.
        let composed = "x\u{e9}", decomposed = "xe\u{301}"
        let unicode = try refused("synced", ["id"], [[.text(composed)], [.text(decomposed)], [.text("z")]]) as? SQLiteError
        #expect(unicode?.message == "a row with id 'z' already exists in table synced")
        #expect(try db.fetchAll("SELECT id FROM synced").count == 1, "a refused write leaves nothing")
    }

    @Test func typedBatchInsertsGoTheDirectWay() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("typed.db"), schema: recordSchema)
        let items = (0..<100).map { TodoItem(title: "t\($0)", count: $0, score: Double($0) / 3) }
        let stored = try db.insert(contentsOf: items)
        #expect(Set(stored.map(\.id)).count == 100 && stored.allSatisfy { !$0.id.isEmpty })
        #expect(try db.fetch(RecordQuery<TodoItem>(sortBy: [SortDescriptor(\.count)])) == stored)
        #expect(try db.uploadQueue.pendingCount() == 100)
    }

    /// A locale whose decimal separator is a comma (`de_DE`), installed or built with
    /// `localedef` into a temporary directory; nil where neither is possible.
    nonisolated(unsafe) static let commaLocale: locale_t? = {
        if let installed = newlocale(LC_NUMERIC_MASK, "de_DE.UTF-8", nil) { return installed }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/localedef"),
            FileManager.default.fileExists(atPath: "/usr/share/i18n/locales/de_DE"),
            let dir = try? TemporaryDirectory(), let build = try? Spawned(executable: "/usr/bin/localedef", ["-i", "de_DE", "-f", "UTF-8", dir.path("de_DE.UTF-8")]),
            (try? build.wait()) == 0
        else { return nil }
        setenv("LOCPATH", dir.path(""), 1)
        defer { unsetenv("LOCPATH") }
        return newlocale(LC_NUMERIC_MASK, "de_DE.UTF-8", nil)
    }()

    /// A decimal comma in the thread's number locale (`uselocale`, as `setlocale(LC_ALL, "")`
    /// gives an app under `de_DE`) changes no value written or read, through the view or the
    /// bulk path. (SQLite's JSON functions read reals with the C library's `strtod`.)
    @Test(.enabled(if: commaLocale != nil, "needs the de_DE locale or localedef")) func aDecimalCommaLocaleChangesNothing() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("comma.db"), schema: Self.schema)
        let previous = uselocale(Self.commaLocale!)
        defer { uselocale(previous) }
        var probe = [CChar](repeating: 0, count: 16)
        _ = withVaList([0.5]) { vsnprintf(&probe, 16, "%g", $0) }
        #expect(String(decoding: probe.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) == "0,5", "the locale is in effect on this thread")
        let reals = [0.5, 0.1 + 0.2, 1e300, -2.5e-7]
        try db.write { tx in
            try tx.insert(into: "synced", columns: ["id", "r"], rows: reals.enumerated().map { [.text("b\($0)"), .real($1)] })
            for (n, real) in reals.enumerated() { try tx.execute("INSERT INTO synced(id, r) VALUES (?, ?)", ["v\(n)", real]) }
        }
        #expect(try db.fetchAll("SELECT r FROM synced ORDER BY id").map { $0[0] } == (reals + reals).map { .real($0) })
        let queued = try db.uploadQueue.transactions(limit: 10).flatMap(\.entries).map { $0.data?["r"] }
        #expect(queued == (reals + reals).map { .double($0) })
    }

    /// Values with reals compared by bit pattern (so -0.0 differs from 0.0).
    private func exact(_ rows: [Row]) -> [[String]] {
        rows.map { row in
            row.values.map { value in
                if case .real(let d) = value { return "real \(d.bitPattern)" }
                return "\(value)"
            }
        }
    }
}
