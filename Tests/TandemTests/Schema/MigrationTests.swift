import Foundation
import Testing
@testable import Tandem

/// Versioned migrations: each runs once per file, in order, in one write transaction; renames,
/// type changes, fills, drops, splits and merges keep every other value exactly; upload
/// semantics are the migration's; a list that lost or reordered a migration, or an older
/// program, is refused before anything changes; a running older program stops writing.
@Suite struct MigrationTests {
    static func notes(_ title: String = "title", extra: [ColumnSchema] = [], indexOn: String? = nil) -> TableSchema {
        TableSchema(
            name: "notes", columns: [.text(title), .integer("n"), .real("r")] + extra,
            indexes: [IndexSchema(name: "by_text", columns: [indexOn ?? title])])
    }

    static let v1 = Schema(tables: [notes()])
    static let rename = Migration("rename-title", uploads: .none, steps: [.renameColumn(table: "notes", from: "title", to: "heading")])
    static let v2 = Schema(tables: [notes("heading")], migrations: [rename])

    /// The data promise's adversarial values: one row per value, in every column.
    static let texts: [String?] = [
        "", "a\u{0}b", "\u{0}", "\u{1}\u{1f}\t\r\n", "{\"a\":1}", "[1,2]", "null", "true", "12", "-0.0", "é e\u{301}", "\\u0000", "\u{e000}1", "🙂", nil,
    ]
    static let ints: [Int64?] = [Int64.min, Int64.max, 0, -1, 9_007_199_254_740_993, nil]
    static let reals: [Double?] = [-0.0, 2.0, 0.1, 0.30000000000000004, 1.7976931348623157e308, 5e-324, -1.5, 123456789.12345679, 1e-7, nil]

    static func seed(_ db: SharedDatabase) throws {
        let count = max(texts.count, ints.count, reals.count)
        try db.write { tx in
            for i in 0..<count {
                try tx.execute(
                    "INSERT INTO notes(id, title, n, r) VALUES (?, ?, ?, ?)",
                    [
                        DatabaseValue.text("row\(i)"), texts[i % texts.count].map(DatabaseValue.text) ?? .null,
                        ints[i % ints.count].map(DatabaseValue.integer) ?? .null, reals[i % reals.count].map(DatabaseValue.real) ?? .null,
                    ])
            }
        }
    }

    /// Every row as the view reads it, reals by their bits, so that -0.0 differs from 0.0.
    static func rows(_ db: SharedDatabase, columns: String) throws -> [[String]] {
        try db.read { tx in
            try tx.fetchAll("SELECT id, \(columns) FROM notes ORDER BY id").map { row in
                row.values.map { value in
                    switch value {
                    case .real(let real): "real \(real.bitPattern)"
                    case .text(let text): "text \(Array(text.utf8))"
                    default: "\(value)"
                    }
                }
            }
        }
    }

    static func pendingEntries(_ db: SharedDatabase) throws -> [String] {
        try db.read { tx in try tx.fetchAll("SELECT data FROM ps_crud ORDER BY id").map { $0[0].stringValue ?? "" } }
    }

    @Test func aRenameMovesEveryValueExactlyAndRewritesPendingUploads() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        var db = try SharedDatabase(path: path, schema: Self.v1)
        try Self.seed(db)
        try db.write { tx in try tx.execute("UPDATE notes SET title = 'pending edit' WHERE id = 'row3'") }
        let before = try Self.rows(db, columns: "title, n, r")
        let queuedBefore = try Self.pendingEntries(db)
        db.close()

        db = try SharedDatabase(path: path, schema: Self.v2)
        defer { db.close() }
        #expect(try Self.rows(db, columns: "heading, n, r") == before)
        #expect(try db.schemaVersion() == 1)
        #expect(try db.migrationHistory().map(\.id) == ["rename-title"])
        #expect(try db.migrationHistory().first?.ran == true)
        // The queued PATCH of the renamed column now names it by its new name, with its value.
        let queued = try Self.pendingEntries(db)
        #expect(queued.count == queuedBefore.count)
        let patch = try #require(queued.last)
        #expect(patch.contains("\"heading\":\"pending edit\""), "\(patch)")
        #expect(!patch.contains("\"title\""), "\(patch)")
        // The index follows; the old column is gone from the view.
        #expect(throws: SQLiteError.self) { try db.read { tx in try tx.fetchAll("SELECT title FROM notes") } }
        let plan = try db.read { tx in try tx.fetchAll("EXPLAIN QUERY PLAN SELECT id FROM notes WHERE heading = 'x'").map { $0[3].stringValue ?? "" } }
        #expect(plan.joined().contains("ps_index__notes__by_text"), "\(plan)")
    }

    @Test func aMigrationRunsOncePerFileEvenWhenManyProcessesOpenItAtOnce() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try SharedDatabase(path: path, schema: Self.v1)
        try db.write { tx in
            for i in 0..<200 { try tx.execute("INSERT INTO notes(id, title, n) VALUES (?, ?, ?)", ["r\(i)", "Title \(i)", i]) }
        }
        let queued = try db.uploadQueue.pendingCount()
        db.close()
        let fix = Migration("lowercase", uploads: .changes, steps: [.fill(table: "notes", column: "title", value: "lower(title)", where: "n % 2 = 0")])
        let file = try dir.schemaFile(Schema(tables: [Self.notes()], migrations: [fix]), name: "v2.json")
        let opens = try (0..<4).map { _ in try Spawned(["init", path, "--schema", file]) }
        for open in opens { #expect(try open.wait(timeout: 60) == 0, "\(open.stderr)") }

        let after = try SharedDatabase(path: path)
        defer { after.close() }
        #expect(try after.migrationHistory().map(\.id) == ["lowercase"])
        // One PATCH per row the fix changed, from one process only.
        #expect(try after.uploadQueue.pendingCount() == queued + 100)
        #expect(try after.read { tx in try tx.scalar("SELECT count(*) FROM notes WHERE title = lower(title)").int64Value } == 100)
    }

    @Test func uploadsFollowTheMigrationsDeclaration() throws {
        for uploads in [Migration.Uploads.none, .changes] {
            let dir = try TemporaryDirectory()
            let path = dir.path("a.db")
            var db = try SharedDatabase(path: path, schema: Self.v1)
            try Self.seed(db)
            let queuedBefore = try db.uploadQueue.pendingCount()
            db.close()
            let backfill = Migration(
                "slug", uploads: uploads,
                steps: [
                    .fill(table: "notes", column: "slug", value: "upper(title)", where: "title IS NOT NULL"),
                    .sql("UPDATE notes SET n = 7 WHERE id = 'row1'"),
                ])
            db = try SharedDatabase(path: path, schema: Schema(tables: [Self.notes(extra: [.text("slug")])], migrations: [backfill]))
            defer { db.close() }
            let filled = try db.read { tx in try tx.scalar("SELECT count(*) FROM notes WHERE slug IS NOT NULL").int64Value ?? 0 }
            #expect(filled == Int64(Self.texts.compactMap { $0 }.count))
            #expect(try db.read { tx in try tx.scalar("SELECT n FROM notes WHERE id = 'row1'").int64Value } == 7)
            let queued = try db.uploadQueue.pendingCount() - queuedBefore
            #expect(queued == (uploads == .none ? 0 : Int(filled) + 1), "uploads \(uploads)")
            // NUL survives the fill into the stored JSON and the PATCH.
            #expect(try db.read { tx in try tx.scalar("SELECT slug FROM notes WHERE id = 'row1'").stringValue } == "A\u{0}B")
        }
    }

    /// Generated values of every type, copied by a fill into new columns of the same types and
    /// renamed: each reads back identically, and each PATCH the fill queued carries it exactly.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func generatedValuesSurviveFillsAndRenamesExactly(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let pieces = ["a", "\u{0}", "\u{1}", "\\", "\"", "{", "}", "[", ":", ",", "null", "é", "🙂", "\u{e000}", "\u{7f}", " ", "\n", "0", "-"]
        func text() -> String { (0..<Int.random(in: 0...8, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined() }
        func real() -> Double {
            switch Int.random(in: 0...3, using: &random) {
            case 0: Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &random) & ~(0x7FF << 52) | (UInt64.random(in: 1...2046, using: &random) << 52))
            case 1: [-0.0, 2.0, 0.1, 5e-324, 1.7976931348623157e308][Int.random(in: 0...4, using: &random)]
            default: Double(Int64.random(in: -1_000_000...1_000_000, using: &random)) / 7
            }
        }
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        var db = try SharedDatabase(path: path, schema: Self.v1)
        try db.write { tx in
            for i in 0..<300 {
                try tx.execute(
                    "INSERT INTO notes(id, title, n, r) VALUES (?, ?, ?, ?)",
                    [
                        DatabaseValue.text("g\(i)"), i % 11 == 0 ? .null : .text(text()),
                        i % 13 == 0 ? .null : .integer(Int64.random(in: Int64.min...Int64.max, using: &random)), i % 17 == 0 ? .null : .real(real()),
                    ])
            }
        }
        let before = try Self.rows(db, columns: "title, n, r")
        let queued = try Self.pendingEntries(db).count
        db.close()
        let copy = Migration(
            "copy", uploads: .changes,
            steps: [
                .fill(table: "notes", column: "t2", value: "title"), .fill(table: "notes", column: "n2", value: "n"), .fill(table: "notes", column: "r2", value: "r"),
                .renameColumn(table: "notes", from: "title", to: "heading"),
            ])
        let v2 = Schema(tables: [Self.notes("heading", extra: [.text("t2"), .integer("n2"), .real("r2")])], migrations: [copy])
        db = try SharedDatabase(path: path, schema: v2)
        defer { db.close() }
        #expect(try Self.rows(db, columns: "heading, n, r") == before)
        #expect(try Self.rows(db, columns: "t2, n2, r2") == before)
        // The PATCH entries hold the same values (NULLs write nothing: the row reads NULL already).
        let (keys, differing) = try db.read { tx in
            let keys = try tx.scalar("SELECT count(*) FROM ps_crud AS c, json_each(c.data, '$.data') AS e WHERE c.id > ?", [queued]).int64Value
            let differing = try tx.scalar(
                """
                SELECT count(*) FROM ps_crud AS c, json_each(c.data, '$.data') AS e JOIN ps_data__notes AS d ON d.id = c.data ->> '$.id'
                WHERE c.id > ? AND (c.data -> ('$.data.' || e.key)) IS NOT (d.data -> ('$.' || e.key))
                """, [queued]
            ).int64Value
            return (keys, differing)
        }
        let expected = before.reduce(0) { total, row in total + row.dropFirst().filter { $0 != "\(DatabaseValue.null)" }.count }
        #expect(keys == Int64(expected))
        #expect(differing == 0)
    }

    /// Renames wait for the table's next fill and are written in the same pass: a chain, a
    /// swap and a fill of some rows keep every value where its new name says, exactly.
    @Test func renamesWrittenWithAFillKeepEveryValue() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let v1 = Schema(tables: [TableSchema(name: "notes", columns: [.text("title"), .integer("n"), .real("r"), .text("other")])])
        var db = try SharedDatabase(path: path, schema: v1)
        try Self.seed(db)
        try db.write { tx in try tx.execute("UPDATE notes SET other = 'o-' || id WHERE id <> 'row2'") }
        let before = try Self.rows(db, columns: "title, n, r, other")
        db.close()
        let moves = Migration(
            "moves", uploads: .none,
            steps: [
                .renameColumn(table: "notes", from: "title", to: "heading"),
                .renameColumn(table: "notes", from: "heading", to: "caption"),  // a chain
                .renameColumn(table: "notes", from: "r", to: "tmp"),  // a swap of r and other
                .renameColumn(table: "notes", from: "other", to: "r2"),
                .renameColumn(table: "notes", from: "tmp", to: "other"),
                .fill(table: "notes", column: "slug", value: "upper(caption) || other", where: "n > 0"),
            ])
        let v2 = Schema(
            tables: [TableSchema(name: "notes", columns: [.text("caption"), .integer("n"), .text("r2"), .real("other"), .text("slug")])], migrations: [moves])
        db = try SharedDatabase(path: path, schema: v2)
        defer { db.close() }
        #expect(try Self.rows(db, columns: "caption, n, other, r2") == before)
        let filled = try db.read { tx in try tx.fetchAll("SELECT id FROM notes WHERE slug IS NOT NULL ORDER BY id").map { $0[0].stringValue ?? "" } }
        let expected = try db.read { tx in
            try tx.fetchAll("SELECT id FROM notes WHERE n > 0 AND upper(caption) || other IS NOT NULL ORDER BY id").map { $0[0].stringValue ?? "" }
        }
        #expect(filled == expected && !filled.isEmpty)
        #expect(
            try db.read { tx in try tx.scalar("SELECT count(*) FROM ps_data__notes WHERE json_type(data, '$.title') IS NOT NULL OR json_type(data, '$.tmp') IS NOT NULL").int64Value
            } == 0)
    }

    /// A fill that reads renamed columns through other views (another table's, or its own in a
    /// subquery) reads them under their new names, with their values.
    @Test func aFillReadsRenamedColumnsThroughEveryView() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let counts = TableSchema(name: "counts", columns: [.integer("n")])
        var db = try SharedDatabase(path: path, schema: Schema(tables: [Self.notes(), counts]))
        try db.write { tx in
            try tx.execute("INSERT INTO notes(id, title, n) VALUES ('a', 'A', 1), ('b', 'B', 5)")
            try tx.execute("INSERT INTO counts(id, n) VALUES ('a', 10), ('b', 20)")
        }
        db.close()
        let migration = Migration(
            "reads", uploads: .none,
            steps: [
                .renameColumn(table: "notes", from: "n", to: "m"),
                .fill(table: "notes", column: "top", value: "(SELECT max(m) FROM notes) - m"),
                .renameColumn(table: "counts", from: "n", to: "cnt"),
                .fill(table: "notes", column: "other", value: "(SELECT cnt FROM counts WHERE counts.id = notes.id)"),
            ])
        let v2 = Schema(
            tables: [Self.notes(extra: [.integer("other"), .integer("top")]), TableSchema(name: "counts", columns: [.integer("cnt")])]
                .map { table in
                    var table = table
                    if table.name == "notes" { table.columns[1].name = "m" }
                    return table
                },
            migrations: [migration])
        db = try SharedDatabase(path: path, schema: v2)
        defer { db.close() }
        let rows = try db.read { tx in try tx.fetchAll("SELECT id, m, other, top FROM notes ORDER BY id").map { $0.values } }
        #expect(rows == [[.text("a"), .integer(1), .integer(10), .integer(4)], [.text("b"), .integer(5), .integer(20), .integer(0)]])
    }

    @Test func aTypeChangeConvertsExactlyOrRefusesNamingTheRowAndChangesNothing() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        var db = try SharedDatabase(path: path, schema: Self.v1)
        try db.write { tx in
            try tx.execute("INSERT INTO notes(id, title) VALUES ('a', '12'), ('b', ' 7 '), ('c', '1e3'), ('d', NULL), ('bad', '2.5')")
            try tx.execute("UPDATE notes SET title = '-3' WHERE id = 'a'")
        }
        db.close()
        let retype = Migration("title-int", uploads: .none, steps: [.changeType(table: "notes", column: "title", to: .integer)])
        let v2 = Schema(tables: [TableSchema(name: "notes", columns: [.integer("title"), .integer("n"), .real("r")])], migrations: [retype])
        let refusal = #expect(throws: TandemError.self) { try SharedDatabase(path: path, schema: v2) }
        let message = "\(refusal.map { "\($0)" } ?? "")"
        #expect(message.contains("title-int") && message.contains("row 'bad'") && message.contains("2.5"), "\(message)")
        db = try SharedDatabase(path: path)
        #expect(try db.schemaVersion() == 0)
        #expect(try db.read { tx in try tx.scalar("SELECT typeof(title) FROM notes WHERE id = 'a'").stringValue } == "text")
        try db.write { tx in try tx.execute("DELETE FROM notes WHERE id = 'bad'") }
        db.close()

        db = try SharedDatabase(path: path, schema: v2)
        defer { db.close() }
        let values = try db.read { tx in try tx.fetchAll("SELECT id, title, typeof(title) FROM notes ORDER BY id").map { "\($0[0]) \($0[1]) \($0[2])" } }
        #expect(values == ["a -3 integer", "b 7 integer", "c 1000 integer", "d NULL null"].map { $0.replacingOccurrences(of: "NULL", with: "\(DatabaseValue.null)") })
        // The pending PATCH of 'a' carries the converted value.
        #expect(try Self.pendingEntries(db).contains { $0.contains("\"title\":-3") })
    }

    @Test func aConversionWithUsingReadsTheOldValues() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        var db = try SharedDatabase(path: path, schema: Self.v1)
        try db.write { tx in try tx.execute("INSERT INTO notes(id, title) VALUES ('a', 'x12'), ('b', 'x-9007199254740993')") }
        db.close()
        let retype = Migration("code", uploads: .none, steps: [.changeType(table: "notes", column: "title", to: .integer, using: "CAST(substr(title, 2) AS INTEGER)")])
        db = try SharedDatabase(path: path, schema: Schema(tables: [TableSchema(name: "notes", columns: [.integer("title"), .integer("n"), .real("r")])], migrations: [retype]))
        defer { db.close() }
        #expect(try db.read { tx in try tx.fetchAll("SELECT title FROM notes ORDER BY id").map(\.[0]) } == [.integer(12), .integer(-9_007_199_254_740_993)])
    }

    @Test func dropsNeedTheirFlagAndRemoveOnlyWhatTheyName() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        var db = try SharedDatabase(path: path, schema: Schema(tables: [Self.notes(), TableSchema(name: "old", columns: [.text("v")])]))
        try Self.seed(db)
        try db.write { tx in try tx.execute("INSERT INTO old(id, v) VALUES ('o', 'gone')") }
        let before = try Self.rows(db, columns: "title, n")
        db.close()
        let after = Schema(tables: [TableSchema(name: "notes", columns: [.text("title"), .integer("n")], indexes: [IndexSchema(name: "by_text", columns: ["title"])])])
        for (flag, step) in [
            ("discardValues", Migration.Step.dropColumn(table: "notes", column: "r", discardValues: false)), ("discardRows", .dropTable(table: "old", discardRows: false)),
        ] {
            var withoutFlag = after
            withoutFlag.migrations = [Migration("drop", uploads: .none, steps: [step])]
            let refusal = #expect(throws: TandemError.self) { try SharedDatabase(path: path, schema: withoutFlag) }
            #expect("\(refusal.map { "\($0)" } ?? "")".contains(flag))
        }
        var dropping = after
        dropping.migrations = [
            Migration("drop", uploads: .none, steps: [.dropColumn(table: "notes", column: "r", discardValues: true), .dropTable(table: "old", discardRows: true)])
        ]
        db = try SharedDatabase(path: path, schema: dropping)
        defer { db.close() }
        #expect(try Self.rows(db, columns: "title, n") == before)
        #expect(try db.read { tx in try tx.scalar("SELECT count(*) FROM ps_data__notes WHERE json_type(data, '$.r') IS NOT NULL").int64Value } == 0)
        #expect(try db.read { tx in try tx.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'ps_data__old'").int64Value } == 0)
    }

    @Test func aTableRenameCarriesRowsIndexesAndPendingUploads() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        var db = try SharedDatabase(path: path, schema: Self.v1)
        try Self.seed(db)
        let before = try Self.rows(db, columns: "title, n, r")
        let queued = try Self.pendingEntries(db).count
        db.close()
        let renamed = TableSchema(name: "memos", columns: [.text("title"), .integer("n"), .real("r")], indexes: [IndexSchema(name: "by_text", columns: ["title"])])
        db = try SharedDatabase(path: path, schema: Schema(tables: [renamed], migrations: [Migration("memos", uploads: .none, steps: [.renameTable(from: "notes", to: "memos")])]))
        defer { db.close() }
        let after = try db.read { tx in try tx.fetchAll("SELECT count(*) FROM memos").first?[0].int64Value }
        #expect(after == Int64(before.count))
        let entries = try Self.pendingEntries(db)
        #expect(entries.count == queued && entries.allSatisfy { $0.contains("\"type\":\"memos\"") })
        #expect(throws: SQLiteError.self) { try db.read { tx in try tx.fetchAll("SELECT * FROM notes") } }
    }

    @Test func aSplitAndAMergeMoveRowsWithTheirIDs() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        var db = try SharedDatabase(path: path, schema: Self.v1)
        try Self.seed(db)
        let before = try Self.rows(db, columns: "title, n")
        db.close()
        // Split: n moves into its own table, keyed by the same id.
        let counts = TableSchema(name: "counts", columns: [.integer("n")])
        let split = Migration(
            "split", uploads: .none,
            steps: [.copyRows(from: "notes", into: "counts", columns: ["n": "n"]), .dropColumn(table: "notes", column: "n", discardValues: true)])
        let v2 = Schema(tables: [TableSchema(name: "notes", columns: [.text("title"), .real("r")]), counts], migrations: [split])
        db = try SharedDatabase(path: path, schema: v2)
        let joined = try db.read { tx in
            try tx.fetchAll("SELECT notes.id, notes.title, counts.n FROM notes JOIN counts USING (id) ORDER BY notes.id").map { row in
                [row[0], row[1], row[2]].map { value -> String in
                    if case .text(let text) = value { return "text \(Array(text.utf8))" }
                    return "\(value)"
                }
            }
        }
        #expect(joined == before)
        db.close()
        // Merge back: n returns to notes, counts leaves.
        let merge = Migration(
            "merge", uploads: .none,
            steps: [
                .fill(table: "notes", column: "n", value: "(SELECT n FROM counts WHERE counts.id = notes.id)"),
                .dropTable(table: "counts", discardRows: true),
            ])
        db = try SharedDatabase(path: path, schema: Schema(tables: [Self.notes()], migrations: [split, merge]))
        defer { db.close() }
        #expect(try Self.rows(db, columns: "title, n") == before)
    }

    @Test func listsThatLostOrReorderedAMigrationAndOlderProgramsAreRefusedBeforeAnythingChanges() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let a = Migration("a", uploads: .none, steps: [.sql("UPDATE notes SET n = 1")])
        let b = Migration("b", uploads: .none, steps: [.sql("UPDATE notes SET n = 2")])
        var db = try SharedDatabase(path: path, schema: Self.v1)
        try db.write { tx in try tx.execute("INSERT INTO notes(id, title) VALUES ('x', 'y')") }
        db.close()
        db = try SharedDatabase(path: path, schema: Schema(tables: Self.v1.tables, migrations: [a, b]))
        #expect(try db.read { tx in try tx.scalar("SELECT n FROM notes").int64Value } == 2)
        db.close()
        let c = Migration("c", uploads: .none, steps: [.sql("UPDATE notes SET n = 3")])
        let cases: [([Migration], String)] = [
            ([b, a, c], "only ever appended"),
            ([a, c], "no longer lists 'b'"),
            ([a, b, c, c], "two migrations have the id 'c'"),
            ([a], "schema version 2"),
            ([], "schema version 2"),
        ]
        for (list, expected) in cases {
            let refusal = #expect(throws: TandemError.self) { try SharedDatabase(path: path, schema: Schema(tables: Self.v1.tables, migrations: list)) }
            #expect("\(refusal.map { "\($0)" } ?? "")".contains(expected), "\(list.map(\.id)): \(refusal.map { "\($0)" } ?? "")")
        }
        db = try SharedDatabase(path: path)
        defer { db.close() }
        #expect(try db.migrationHistory().map(\.id) == ["a", "b"])
        #expect(try db.read { tx in try tx.scalar("SELECT n FROM notes").int64Value } == 2)
    }

    /// An older program opens a file migrated past it when the newer migrations say it may
    /// read (they only add and fill): it reads, and its writes are refused naming both versions.
    @Test func anOlderProgramReadsAFileItsNewerMigrationsLetItRead() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        var db = try SharedDatabase(path: path, schema: Self.v1)
        try db.write { tx in try tx.execute("INSERT INTO notes(id, title) VALUES ('x', 'Title')") }
        db.close()
        let slug = Migration("slug", uploads: .none, readableByOlderVersions: true, steps: [.fill(table: "notes", column: "slug", value: "lower(title)")])
        db = try SharedDatabase(path: path, schema: Schema(tables: [Self.notes(extra: [.text("slug")])], migrations: [slug]))
        db.close()
        let old = try SharedDatabase(path: path, schema: Self.v1)
        defer { old.close() }
        #expect(try old.read { tx in try tx.scalar("SELECT title FROM notes").stringValue } == "Title")
        let refusal = #expect(throws: TandemError.self) { try old.write { tx in try tx.execute("UPDATE notes SET title = 'x'") } }
        #expect(refusal == .schemaMigrated(path: path, fileVersion: 1, lastMigration: "slug", programVersion: 0))
        // The newer program's tables are as it left them: the older one installed nothing.
        #expect(try old.read { tx in try tx.scalar("SELECT slug FROM notes").stringValue } == "title")
    }

    @Test func aMigrationThatFailsHalfWayChangesNothing() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        var db = try SharedDatabase(path: path, schema: Self.v1)
        try Self.seed(db)
        let before = try Self.rows(db, columns: "title, n, r")
        let queued = try Self.pendingEntries(db)
        db.close()
        let failing = Migration(
            "half", uploads: .changes,
            steps: [
                .renameColumn(table: "notes", from: "title", to: "heading"),
                .fill(table: "notes", column: "n", value: "CASE WHEN id = 'row4' THEN 'not a number' ELSE 5 END"),
            ])
        let refusal = #expect(throws: TandemError.self) { try SharedDatabase(path: path, schema: Schema(tables: [Self.notes("heading")], migrations: [failing])) }
        let message = "\(refusal.map { "\($0)" } ?? "")"
        #expect(message.contains("'half'") && message.contains("fill notes.n") && message.contains("row 'row4'") && message.contains("not a number"), "\(message)")
        db = try SharedDatabase(path: path)
        defer { db.close() }
        #expect(try db.schemaVersion() == 0)
        #expect(try Self.rows(db, columns: "title, n, r") == before)
        #expect(try Self.pendingEntries(db) == queued)
    }

    /// Swift code runs in the migration's transaction: what it writes is kept with the
    /// migration, and when it throws nothing of the migration is.
    @Test func swiftStepsRunInTheMigrationsTransaction() throws {
        struct Refused: Error {}
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        var db = try SharedDatabase(path: path, schema: Self.v1)
        try db.write { tx in try tx.execute("INSERT INTO notes(id, title) VALUES ('a', 'one')") }
        db.close()
        let failing = Migration(
            "tidy", uploads: .changes,
            steps: [
                .swift(name: "upper") { tx in try tx.execute("UPDATE notes SET title = upper(title)") },
                .swift(name: "refuse") { _ in throw Refused() },
            ])
        let refusal = #expect(throws: TandemError.self) { try SharedDatabase(path: path, schema: Schema(tables: Self.v1.tables, migrations: [failing])) }
        #expect("\(refusal.map { "\($0)" } ?? "")".contains("run Swift code 'refuse'"))
        db = try SharedDatabase(path: path)
        #expect(try db.read { tx in try tx.scalar("SELECT title FROM notes").stringValue } == "one")
        let queued = try db.uploadQueue.pendingCount()
        db.close()
        let working = Migration("tidy", uploads: .changes, steps: [.swift(name: "upper") { tx in try tx.execute("UPDATE notes SET title = upper(title)") }])
        db = try SharedDatabase(path: path, schema: Schema(tables: Self.v1.tables, migrations: [working]))
        defer { db.close() }
        #expect(try db.read { tx in try tx.scalar("SELECT title FROM notes").stringValue } == "ONE")
        #expect(try db.uploadQueue.pendingCount() == queued + 1)
    }

    @Test func aNewFileRecordsItsMigrationsWithoutRunningThem() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: Self.v2)
        defer { db.close() }
        let history = try db.migrationHistory()
        #expect(history.map(\.id) == ["rename-title"] && history.allSatisfy { !$0.ran })
        #expect(try db.read { tx in try tx.fetchAll("SELECT heading FROM notes") }.isEmpty)
    }

    @Test func aRunningOlderProgramIsToldOnItsNextWrite() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let old = try SharedDatabase(path: path, schema: Self.v1)
        defer { old.close() }
        try old.write { tx in try tx.execute("INSERT INTO notes(id, title) VALUES ('x', 'y')") }
        let new = try SharedDatabase(path: path, schema: Self.v2)
        defer { new.close() }
        let refusal = #expect(throws: TandemError.self) { try old.write { tx in try tx.execute("INSERT INTO notes(id, heading) VALUES ('z', 'w')") } }
        #expect(refusal == .schemaMigrated(path: path, fileVersion: 1, lastMigration: "rename-title", programVersion: 0))
        try new.write { tx in try tx.execute("INSERT INTO notes(id, heading) VALUES ('z', 'w')") }
        #expect(try new.read { tx in try tx.scalar("SELECT count(*) FROM notes").int64Value } == 2)
    }

    /// A live query of the older program whose column the migration renamed ends with the
    /// typed error; one that still reads (every column) gets the new schema's rows.
    @Test func liveQueriesOfARunningOlderProgramEndWithTheTypedError() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let old = try SharedDatabase(path: path, schema: Self.v1)
        defer { old.close() }
        try await old.write { tx in try tx.execute("INSERT INTO notes(id, title) VALUES ('x', 'y')") }
        var byName = old.watch("SELECT title FROM notes").makeAsyncIterator()
        var everything = old.watch("SELECT * FROM notes").makeAsyncIterator()
        #expect(try await byName.next(within: 10, "the first result")?.first?["title"] == .text("y"))
        #expect(try await everything.next(within: 10, "the first result")?.first?["title"] == .text("y"))
        let new = try SharedDatabase(path: path, schema: Self.v2)
        defer { new.close() }
        await #expect(throws: TandemError.schemaMigrated(path: path, fileVersion: 1, lastMigration: "rename-title", programVersion: 0)) {
            _ = try await byName.next(within: 10, "the end of the renamed column's query")
        }
        #expect(try await everything.next(within: 10, "the rows after the migration")?.first?["heading"] == .text("y"))
    }

    @Test func aDryRunReportsThePlanAndLeavesTheFileAsItWas() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        var db = try SharedDatabase(path: path, schema: Self.v1)
        try Self.seed(db)
        db.close()
        db = try SharedDatabase(path: path)
        defer { db.close() }
        let report = try db.migrate(to: Self.v2, dryRun: true)
        #expect(report.fromVersion == 0 && report.toVersion == 1 && report.ran == ["rename-title"])
        #expect(report.steps.first?.rowsChanged == Self.texts.count, "\(report)")
        #expect(try db.schemaVersion() == 0)
        #expect(try db.read { tx in try tx.fetchAll("SELECT title FROM notes") }.count == Self.texts.count)
    }
}
