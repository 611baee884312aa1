import Foundation
import Testing
@testable import Tandem

/// Imports read as they go: the same stored rows and CRUD entries as inserts through the view,
/// wherever the reads cut the payload (chunks of a byte), as an array or newline-delimited; equal
/// rows found unchanged from their stored JSON; what the general reader must judge judged by it.
@Suite struct StreamingImportTests {
    static let schema = Schema(tables: [
        TableSchema(name: "v", columns: [.text("t"), .integer("i"), .real("r")]),
        TableSchema(name: "loc", columns: [.text("t"), .integer("i"), .real("r")], localOnly: true),
    ])

    /// Adversarial values, each in every column that takes it (NULL in the others), as elements.
    static var elements: [JSONValue] {
        var values = adversarialValues
        var random = SeededRandom(seed: 0x57ea)
        for _ in 0..<200 {
            let d = Double(bitPattern: random.next())
            if d.isFinite { values.append(.double(d)) }
        }
        values += [
            .double(123456789.12345678), .double(0.14285714285714285), .string("\u{e000}1"), .string("ü 日本 😀 \u{2028}"),
            .string("a\"b\\c/d\u{8}\u{c}"), .integer(9007199254740993), .double(9007199254740992.0),
        ]
        let columns: [(String, ColumnSchema.ColumnType)] = [("t", .text), ("i", .integer), ("r", .real)]
        return values.enumerated().map { n, value in
            var object: [String: JSONValue] = ["id": .string("e\(n)")]
            for (name, type) in columns {
                // A date string in a real column is the import's own reading of text.
                if case .string(let s) = value, type == .real, (try? ISO8601Timestamp.secondsSince1970(s)) != nil { continue }
                object[name] = ColumnRule.stored(value.databaseValue, in: type) != nil ? value : .null
            }
            return .object(object)
        }
    }

    static func arrayText(_ elements: [JSONValue]) -> String { JSONValue.array(elements).jsonText }
    static func lines(_ elements: [JSONValue]) -> String { elements.map(\.jsonText).joined(separator: "\n") + "\n" }

    func snapshot(_ db: SharedDatabase, _ table: String) throws -> [[String]] {
        try db.fetchAll("SELECT * FROM \(table) ORDER BY id").map { $0.values.map(exact) }
    }

    func entries(_ db: SharedDatabase) throws -> [String] {
        try db.uploadQueue.transactions(limit: 1000).flatMap(\.entries).map(\.jsonText)
    }

    @Test func storesAndQueuesWhatTheViewDoesWhereverReadsCutThePayload() throws {
        let dir = try TemporaryDirectory()
        let elements = Self.elements
        let reference = try SharedDatabase(path: dir.path("view.db"), schema: Self.schema)
        try reference.write { tx in
            for case .object(let object) in elements {
                let names = object.keys.sorted()
                try tx.execute(
                    "INSERT INTO v(\(names.joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))",
                    names.map { object[$0]!.databaseValue })
            }
        }
        for (chunk, format) in [(1, PayloadFormat.array), (3, .ndjson), (7, .array), (1 << 20, .ndjson)] {
            let db = try SharedDatabase(path: dir.path("c\(chunk).db"), schema: Self.schema)
            let text = format == .array ? Self.arrayText(elements) : Self.lines(elements)
            let options = ImportOptions(format: format)
            let result = try db.importJSON(from: .data(Data(text.utf8)), into: "v", options: options, chunk: chunk, progress: nil)
            #expect(result.tables["v"] == ImportResult.Counts(inserted: elements.count), "chunk \(chunk)")
            #expect(try snapshot(db, "v") == snapshot(reference, "v"), "chunk \(chunk): stored rows")
            #expect(try entries(db) == entries(reference), "chunk \(chunk): CRUD entries")
            // Every row is found unchanged, read from its stored JSON, whatever cuts the reads.
            let again = try db.importJSON(from: .data(Data(text.utf8)), into: "v", options: options, chunk: chunk, progress: nil)
            #expect(again.tables["v"] == ImportResult.Counts(unchanged: elements.count), "chunk \(chunk): again")
        }
        // Rows the view wrote (18-digit reals in SQLite's digits) are found unchanged too, and an
        // export of them imports as a no-op.
        let queued = try reference.uploadQueue.pendingCount()
        let again = try reference.importJSON(Data(Self.arrayText(elements).utf8), into: "v")
        #expect(again.tables["v"] == ImportResult.Counts(unchanged: elements.count))
        let exported = try reference.exportJSON(table: "v")
        #expect(try reference.importJSON(exported, into: "v").tables["v"] == ImportResult.Counts(unchanged: elements.count))
        #expect(try reference.uploadQueue.pendingCount() == queued)
    }

    /// Elements the fast reader leaves to the general one (keys with escapes or outside ASCII,
    /// nested values, keys in other orders, columns left out) give the same rows.
    @Test func elementsOfEveryShapeGiveTheSameRows() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("s.db"), schema: Self.schema)
        let payload = """
            [{"id":"a","t":"x","i":1,"r":1.5},
             {"r":2.5,"i":2,"t":"y","id":"b"},
             {"id":"c","\\u0074":"escaped key","i":3},
             {"id":"d","t":"z","ü":"ignored","extra":{"nested":[1,{"k":2.0}]}},
             {"id":"e","i":true,"r":"2024-01-02T03:04:05Z"},
             {"id":7,"t":"\\u00e9\\/\\n","r":-0.0,"i":-0},
             {"id":"f","i":2.0,"r":3,"t":12},
             {"id":"g"}]
            """
        let result = try db.importJSON(from: .data(Data(payload.utf8)), into: "v", options: ImportOptions(), chunk: 5, progress: nil)
        #expect(result.tables["v"] == ImportResult.Counts(inserted: 8))
        let rows = try db.fetchAll("SELECT id, t, i, r FROM v ORDER BY id").map { $0.values.map(exact) }
        let expected: [[DatabaseValue]] = [
            [.text("7"), .text("é/\n"), .integer(0), .real(-0.0)],
            [.text("a"), .text("x"), .integer(1), .real(1.5)],
            [.text("b"), .text("y"), .integer(2), .real(2.5)],
            [.text("c"), .text("escaped key"), .integer(3), .null],
            [.text("d"), .text("z"), .null, .null],
            [.text("e"), .null, .integer(1), .real(1_704_164_645)],
            [.text("f"), .text("12"), .integer(2), .real(3.0)],
            [.text("g"), .null, .null, .null],
        ]
        #expect(rows == expected.map { $0.map(exact) })
        // The same payload again changes nothing; an element leaving columns out patches none.
        #expect(try db.importJSON(Data(payload.utf8), into: "v").tables["v"] == ImportResult.Counts(unchanged: 8))
        let partial = try db.importJSON(Data(#"[{"id":"a","i":5},{"id":"b","t":"y"}]"#.utf8), into: "v")
        #expect(partial.tables["v"] == ImportResult.Counts(updated: 1, unchanged: 1))
        #expect(try entries(db).last == #"{"data":{"i":5},"id":"a","op":"PATCH","type":"v"}"#)
    }

    /// `--delete-missing` walks the stored ids beside the payload's (both in id order), within
    /// the scope when given; local-only tables too; a payload already in id order (an export)
    /// as well as one in no order.
    @Test func rowsMissingFromALargePayloadAreDeleted() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("d.db"), schema: Self.schema)
        let all = (0..<3000).map { n in JSONValue.object(["id": .string(String(format: "%08x", (n * 2_654_435_761) % (1 << 32))), "i": .integer(Int64(n % 3))]) }
        for table in ["v", "loc"] {
            #expect(try db.importJSON(Data(Self.arrayText(all).utf8), into: table).tables[table]?.inserted == 3000)
            var kept = all.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
            if table == "loc" {
                func id(_ element: JSONValue) -> String { if case .object(let o) = element, case .string(let id)? = o["id"] { return id }; return "" }
                kept.sort { id($0) < id($1) }  // hexadecimal ids of one length: Swift's order is SQLite's
            }
            let pruned = try db.importJSON(Data(Self.lines(kept).utf8), into: table, options: ImportOptions(deleteMissing: true, format: .ndjson))
            #expect(pruned.tables[table] == ImportResult.Counts(deleted: 1500, unchanged: 1500), "\(table)")
            // Within a scope: only rows with i = 1 that the payload lacks go.
            let scoped = try db.importJSON(Data("[]".utf8), into: table, options: ImportOptions(deleteMissing: true, scope: ("i", "1")))
            let ones = (0..<3000).filter { $0 % 2 == 0 && $0 % 3 == 1 }.count
            #expect(scoped.tables[table] == ImportResult.Counts(deleted: ones), "\(table)")
            #expect(try count(db, "SELECT count(*) FROM \(table) WHERE i = 1") == 0)
            #expect(try count(db, "SELECT count(*) FROM \(table)") == Int64(1500 - ones))
        }
    }

    /// A duplicate id is named by the element that repeats it, however far apart, whether the
    /// table was empty (rows written by the bulk path) or not (rows looked up).
    @Test func anIDTwiceIsNamedByItsSecondElement() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("dup.db"), schema: Self.schema)
        var elements = (0..<3000).map { JSONValue.object(["id": .string("n\($0)")]) }
        elements[2500] = .object(["id": .string("n10")])
        for round in 0..<2 {
            #expect(throws: TandemError.invalidPayload("element [2500]: id 'n10' appears twice in the payload")) {
                try db.importJSON(Data(Self.arrayText(elements).utf8), into: "v")
            }
            #expect(try count(db, "SELECT count(*) FROM v") == Int64(round))
            if round == 0 { try db.write { try $0.execute("INSERT INTO v(id) VALUES ('other')") } }
        }
    }

    /// An element longer than a read (3 MB of text against reads of 1 MiB) is kept whole.
    @Test func anElementLongerThanAReadIsKeptWhole() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("l.db"), schema: Self.schema)
        let title = String(repeating: "é", count: 1_500_000)
        let payload = #"[{"id":"a","t":"\#(title)"},{"id":"b","t":"short"}]"#
        let result = try db.importJSON(from: .data(Data(payload.utf8)), into: "v", options: ImportOptions(), chunk: 1 << 20, progress: nil)
        #expect(result.tables["v"] == ImportResult.Counts(inserted: 2))
        #expect(try db.fetchAll("SELECT t FROM v WHERE id = 'a'").first?[0] == .text(title))
    }

    @Test func progressIsReportedAsElementsAreRead() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("p.db"), schema: Self.schema)
        let elements = (0..<5000).map { JSONValue.object(["id": .string("p\($0)"), "t": .string("title \($0)")]) }
        let data = Data(Self.lines(elements).utf8)
        var reports: [ImportProgress] = []
        try db.importJSON(from: .data(data), into: "v", options: ImportOptions(format: .ndjson)) { reports.append($0) }
        #expect(reports.count == 5)
        #expect(reports.map(\.elements) == [1024, 2048, 3072, 4096, 5000])
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.bytesRead < $1.bytesRead })
        #expect(reports.allSatisfy { $0.totalBytes == Int64(data.count) })
        #expect(reports.last?.fractionRead == 1)
    }
}
