import Foundation
import Testing
@testable import Tandem

/// A fill is written in one pass over the stored rows (``MigrationFill``), and must store what
/// the same UPDATE through the view stores: the same bytes in every row, the same PATCHes, the
/// same refusals (naming the row), for generated rows of adversarial values and expressions of
/// every type that take each way through the write rule (stored as given, converted, refused),
/// after a rename or not, over the whole table or some rows, in tables of any name.
@Suite struct OnePassFillTests {
    struct Case: CustomStringConvertible {
        /// The filled column: a new one (`slug` text, `k` integer, `z` real) or an existing one.
        let column: String
        /// The value over the columns, `{t}` standing for the text column's name, `{n}` for the table's.
        let value: String
        var condition: String? = nil
        /// The same values through the view, where `value` cannot be written there (a window function).
        var viaView: String? = nil
        var description: String { "\(column) = \(value)\(condition.map { " where \($0)" } ?? "")" }
    }

    static let cases: [Case] = [
        // Into text: as given (ASCII, NUL), converted (numbers), the rule's slow way (other text), refused.
        Case(column: "slug", value: "{t}"), Case(column: "slug", value: "lower({t})"), Case(column: "slug", value: "n"),
        Case(column: "slug", value: "r"), Case(column: "slug", value: "{t} || char(233)"),
        Case(column: "slug", value: "CASE WHEN n % 3 = 0 THEN NULL ELSE {t} END", condition: "n > 0"),
        Case(column: "slug", value: "CASE WHEN n % 5 = 1 THEN CAST(x'ff' AS TEXT) ELSE {t} END"),
        Case(column: "slug", value: "CASE WHEN n % 5 = 2 THEN x'00' ELSE 'b' END"),
        Case(column: "slug", value: "r * 1e308"),
        // Into integer.
        Case(column: "k", value: "n"), Case(column: "k", value: "r"), Case(column: "k", value: "length({t})"),
        Case(column: "k", value: "'12'"), Case(column: "k", value: "9.0"), Case(column: "k", value: "CAST(n AS TEXT)"),
        Case(column: "k", value: "{t}"), Case(column: "k", value: "n", condition: "r < 0"),
        // Into real: every real by the exact literal, integers and text converted or refused.
        Case(column: "z", value: "r"), Case(column: "z", value: "n"), Case(column: "z", value: "'0.1'"), Case(column: "z", value: "n / 7.0"),
        Case(column: "z", value: "-0.0"), Case(column: "z", value: "{t}"), Case(column: "z", value: "r * 1e300"),
        // Existing columns: unchanged rows are not written; -0.0 + 0.0 changes the sign only.
        Case(column: "{t}", value: "{t}"), Case(column: "{t}", value: "upper({t})", condition: "n > 0"), Case(column: "n", value: "n + 0"),
        Case(column: "n", value: "n * 2", condition: "n BETWEEN -1000000 AND 1000000"), Case(column: "r", value: "r + 0.0"), Case(column: "r", value: "r"),
        // Values over other rows: computed over the selected rows first.
        Case(
            column: "k", value: "row_number() OVER (ORDER BY id)",
            viaView: "(SELECT w FROM (SELECT id, row_number() OVER (ORDER BY id) AS w FROM {n}) AS o WHERE o.id = {n}.id)"),
        Case(
            column: "slug", value: "{t} || rank() OVER (ORDER BY {t})", condition: "n > 0",
            viaView: "(SELECT w FROM (SELECT id, {t} || rank() OVER (ORDER BY {t}) AS w FROM {n} WHERE n > 0) AS o WHERE o.id = {n}.id)"),
        Case(column: "k", value: "(SELECT count(*) FROM {n} AS o WHERE o.n < {n}.n)"),
        // A condition reads the rows as they were before the fill, as an UPDATE's WHERE does.
        Case(column: "k", value: "1", condition: "(SELECT count(*) FROM {n} AS o WHERE o.k IS NOT NULL AND o.id <> {n}.id) < 2"),
        // Text a JSON function made is text, not JSON to embed.
        Case(column: "slug", value: "json_object('a', {t})"), Case(column: "slug", value: "json_array(n, r)"), Case(column: "slug", value: "{t} -> '$'"),
        // An error of the user's SQL names the user's SQL, on either path.
        Case(
            column: "slug", value: "json({t}) || row_number() OVER ()",
            viaView: "(SELECT w FROM (SELECT id, json({t}) || row_number() OVER () AS w FROM {n}) AS o WHERE o.id = {n}.id)"),
    ]

    static func schema(title: String) -> [ColumnSchema] {
        [.text(title), .integer("n"), .real("r"), .text("slug"), .integer("k"), .real("z")]
    }

    /// Rows of generated values: text of JSON's and SQL's awkward characters, integers to the
    /// limits, reals of any bit pattern, NULLs.
    static func seed(_ db: SharedDatabase, table: String, seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let pieces = ["a", "B", "\u{0}", "\u{1}", "\\", "\"", "{", "}", ":", "null", "é", "🙂", "\u{7f}", " ", "\n", "0", "-", "1e5", "\u{e000}"]
        try db.write { tx in
            for i in 0..<120 {
                let text = (0..<Int.random(in: 0...6, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
                let n: Int64 = [Int64.min, Int64.max, 0, -1, 9_007_199_254_740_993, Int64.random(in: -50...50, using: &random)][i % 6]
                let r: Double =
                    i % 4 == 0
                    ? Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &random) & ~(0x7FF << 52) | (UInt64.random(in: 1...2046, using: &random) << 52))
                    : [-0.0, 2.0, 0.1, 5e-324, 1.7976931348623157e308, -1.5, 12.0][i % 7]
                try tx.execute(
                    "INSERT INTO \(SQLText.identifier(table))(id, title, n, r) VALUES (?, ?, ?, ?)",
                    [
                        DatabaseValue.text("row\(i)"), i % 9 == 0 ? .null : .text(text), i % 10 == 0 ? .null : .integer(n), i % 11 == 0 ? .null : .real(r),
                    ])
            }
        }
    }

    /// What migrating a copy of `source` with `steps` did: the steps' row counts or the error
    /// (without the SQL it names), the stored rows as bytes, the uploads it queued.
    static func migrate(_ source: String, to path: String, _ steps: [Migration.Step], uploads: Migration.Uploads, table: String, title: String) throws -> (
        outcome: String, rows: [[String]], queued: [String]
    ) {
        try FileManager.default.copyItem(atPath: source, toPath: path)
        let db = try SharedDatabase(path: path)
        defer { db.close() }
        let before = try db.read { tx in try tx.scalar("SELECT coalesce(max(id), 0) FROM ps_crud").int64Value ?? 0 }
        let target = Schema(tables: [TableSchema(name: table, columns: schema(title: title))], migrations: [Migration("fill", uploads: uploads, steps: steps)])
        let outcome: String
        do {
            outcome = "\(try db.migrate(to: target).steps.map(\.rowsChanged))"
        } catch {
            outcome = "\(error)".replacing(#/ in '[^']*' - while executing `[^`]*`/#, with: "")
        }
        return try db.read { tx in
            let rows = try tx.fetchAll("SELECT id, hex(data) FROM \(SQLText.identifier("ps_data__" + table)) ORDER BY id").map { $0.values.map { "\($0)" } }
            let queued = try tx.fetchAll("SELECT data ->> '$.id', data ->> '$.op', data -> '$.data' FROM ps_crud WHERE id > ? ORDER BY 1", [before])
                .map { $0.values.map { "\($0)" }.joined(separator: " ") }
            return (outcome, rows, queued)
        }
    }

    /// Each fill against the same change made by the user's SQL through the view (whose trigger
    /// applies the same write rule and writes only what changed), and against itself queuing
    /// its uploads: the same bytes in every row, the same PATCHes, the same refusals, each
    /// naming a row.
    @Test(arguments: [(false, "notes"), (true, "notes"), (false, "tandem_row"), (true, "row")])
    func aFillStoresWhatAnUpdateThroughTheViewStores(afterARename: Bool, table: String) throws {
        let dir = try TemporaryDirectory()
        let source = dir.path("source.db")
        let db = try SharedDatabase(path: source, schema: Schema(tables: [TableSchema(name: table, columns: Self.schema(title: "title"))]))
        try Self.seed(db, table: table, seed: afterARename ? 2 : 1)
        _ = try db.checkpoint(.truncate)
        db.close()
        let title = afterARename ? "heading" : "title"
        let rename: [Migration.Step] = afterARename ? [.renameColumn(table: table, from: "title", to: "heading")] : []
        let name = SQLText.identifier(table)
        let spelled = { (sql: String) in sql.replacingOccurrences(of: "{t}", with: title).replacingOccurrences(of: "{n}", with: name) }
        var refusals = 0
        for (index, fill) in Self.cases.enumerated() {
            let column = spelled(fill.column)
            let value = spelled(fill.value)
            let condition = fill.condition.map(spelled)
            let step = Migration.Step.fill(table: table, column: column, value: value, where: condition)
            let update = Migration.Step.sql("UPDATE \(name) SET \(column) = (\(spelled(fill.viaView ?? fill.value)))\(condition.map { " WHERE \($0)" } ?? "")")
            let onePass = try Self.migrate(source, to: dir.path("\(index)-none.db"), rename + [step], uploads: .none, table: table, title: title)
            let queued = try Self.migrate(source, to: dir.path("\(index)-changes.db"), rename + [step], uploads: .changes, table: table, title: title)
            let viaView = try Self.migrate(source, to: dir.path("\(index)-view.db"), rename + [update], uploads: .changes, table: table, title: title)
            #expect(onePass.outcome == queued.outcome, "\(fill): \(onePass.outcome) against \(queued.outcome)")
            #expect(!onePass.outcome.contains("ps_") && !onePass.outcome.contains("tandem_fill"), "\(fill): an internal name in \(onePass.outcome)")
            #expect(onePass.rows == queued.rows, "\(fill)")
            if viaView.outcome.hasPrefix("[") {
                #expect(onePass.outcome.hasPrefix(afterARename ? "[120, " : "["), "\(fill): \(onePass.outcome) (the rename rewrote every row)")
                let differing = zip(onePass.rows, viaView.rows).filter { $0 != $1 }
                #expect(onePass.rows.count == 120 && differing.isEmpty, "\(fill): \(differing.count) rows differ from the view's, first \(differing.first.map { "\($0)" } ?? "")")
                #expect(queued.queued == viaView.queued, "\(fill): PATCHes differ")
            } else if let refusal = viaView.outcome.firstMatch(of: #/constraint failed\): (.*?); nothing was changed/#) {
                // The view's trigger refuses with the column's message; the fill names the row too.
                #expect(onePass.outcome.contains(refusal.1 + " (row '"), "\(fill): \(onePass.outcome) against \(viaView.outcome)")
                refusals += 1
            } else {
                // Any other error of the user's SQL is SQLite's, alike.
                let sqliteMessage = { (outcome: String) in outcome.firstMatch(of: #/SQLite error .*/#).map { String($0.0) } ?? outcome }
                #expect(sqliteMessage(onePass.outcome) == sqliteMessage(viaView.outcome), "\(fill)")
            }
        }
        // The refusing cases refused (BLOB, invalid text, infinite, text that is no number).
        #expect(refusals >= 6, "\(refusals) refusals")
    }

    /// A value is each row's own: an aggregate (which an UPDATE refuses too) is refused, with
    /// or without a condition, in a fill and in a type change's conversion, naming the way to
    /// write it, and nothing changes.
    @Test(arguments: [
        Migration.Step.fill(table: "notes", column: "k", value: "count(*)"),
        .fill(table: "notes", column: "k", value: "count(*)", where: "n > 100"),
        .fill(table: "notes", column: "k", value: "max(n) + 1", where: "n < 3"),
        .changeType(table: "notes", column: "title", to: .integer, using: "max(length(title))"),
    ])
    func anAggregateIsRefusedAndChangesNothing(step: Migration.Step) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try SharedDatabase(path: path, schema: Schema(tables: [TableSchema(name: "notes", columns: Self.schema(title: "title"))]))
        try Self.seed(db, table: "notes", seed: 3)
        db.close()
        let before = try Self.migrate(path, to: dir.path("unchanged.db"), [], uploads: .none, table: "notes", title: "title").rows
        var columns = Self.schema(title: "title")
        if case .changeType = step { columns[0] = .integer("title") }
        let migrated = try SharedDatabase(path: path)
        defer { migrated.close() }
        let error = #expect(throws: TandemError.self) {
            try migrated.migrate(to: Schema(tables: [TableSchema(name: "notes", columns: columns)], migrations: [Migration("aggregate", uploads: .changes, steps: [step])]))
        }
        let message = "\(error.map { "\($0)" } ?? "")"
        #expect(message.contains("misuse of aggregate function") && message.contains("a subquery") && !message.contains("ps_"), "\(message)")
        #expect(try migrated.read { tx in try tx.fetchAll("SELECT id, hex(data) FROM ps_data__notes ORDER BY id").map { $0.values.map { "\($0)" } } } == before)
        #expect(try migrated.uploadQueue.pendingCount() == 120)
    }
}
