import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// A `RETURNING` clause of a write through a table's view returns the rows as stored: the id
/// the view minted, and each value as its column stored it.
@Suite struct ReturningTests {
    static let schema = Schema(tables: [
        TableSchema(name: "notes", columns: [.text("title"), .integer("done"), .real("score")]),
        TableSchema(name: "drafts", columns: [.text("title"), .integer("done"), .real("score")], localOnly: true),
        TableSchema(name: "events", columns: [.text("title"), .integer("done"), .real("score")], insertOnly: true),
    ])

    let dir: TemporaryDirectory
    init() throws { dir = try TemporaryDirectory() }

    /// README's first example prints the id the row was stored under.
    @Test func execPrintsTheMintedID() throws {
        let path = dir.path("a.db")
        _ = try SharedDatabase(path: path, schema: Self.schema)
        let result = try runTandem(["exec", path, "INSERT INTO notes(title) VALUES (?) RETURNING id", "Buy milk", "--mode", "csv", "--no-header"])
        #expect(result.status == 0, "\(result.stderr)")
        let printed = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let stored = try SharedDatabase(path: path).fetchAll("SELECT id FROM notes WHERE title = 'Buy milk'").first?[0].stringValue
        #expect(stored != nil && printed == stored, "printed \(printed), stored \(String(describing: stored))")
        #expect(UUID(uuidString: printed) != nil)
    }

    /// Generated inserts of every kind of table, many rows at once, every value kind (converted
    /// by the columns' rule), through `run`, `fetchAll` and `scalar`: each returned row is the
    /// stored row (for an insert-only table, the queued one), in the statement's order.
    @Test func insertsReturnTheRowsAsStored() throws {
        let db = try SharedDatabase(path: dir.path("a.db"), schema: Self.schema)
        let values: [(DatabaseValue, DatabaseValue, DatabaseValue)] = [
            (.text("a"), .integer(1), .real(2.5)), (.integer(42), .text("12"), .integer(3)), (.null, .real(2.0), .text("-0.0")),
            (.text("x\u{0}y"), .integer(.max), .real(.leastNonzeroMagnitude)), (.text("{\"json\":1}"), .text(" 7 "), .real(1e300)),
        ]
        for table in ["notes", "drafts", "events"] {
            for (path, returning) in [("run", "RETURNING *"), ("fetchAll", "RETURNING id, title, done, score"), ("run", "RETURNING \(table).id, \(table).title, done, \"score\"")] {
                let placeholders = values.map { _ in "(?, ?, ?)" }.joined(separator: ", ")
                let sql = "INSERT INTO \(table)(title, done, score) VALUES \(placeholders) \(returning)"
                let arguments = values.flatMap { [$0.0, $0.1, $0.2] }
                let returned = try db.write { tx in
                    path == "run" ? try tx.run(sql, arguments).resultSets[0].rows : try tx.fetchAll(sql, arguments)
                }
                #expect(returned.count == values.count)
                let ids = returned.compactMap { $0[0].stringValue }
                #expect(Set(ids).count == values.count && ids.allSatisfy { UUID(uuidString: $0) != nil }, "\(table) \(path): \(ids)")
                for (row, given) in zip(returned, values) {
                    let expected = [ColumnRule.stored(given.0, in: .text), ColumnRule.stored(given.1, in: .integer), ColumnRule.stored(given.2, in: .real)]
                    #expect(row.values.dropFirst().map(exact) == expected.map { $0.map(exact) ?? "refused" }, "\(table) \(path): \(row.values)")
                    #expect(try stored(db, table, id: row[0].stringValue ?? "")?.map(exact) == row.values.map(exact), "\(table): returned equals stored")
                }
            }
            let id = try db.write { try $0.scalar("INSERT INTO \(table)(title) VALUES ('scalar') RETURNING id") }
            #expect(try stored(db, table, id: id.stringValue ?? "")?.dropFirst().first == .text("scalar"))
        }
    }

    /// An UPDATE returns the rows it matched as stored, those it changed nothing in included;
    /// a DELETE the rows as they were; a clause SQLite must evaluate (a parameter in it) still
    /// writes once.
    @Test func updatesDeletesAndParametersReturnWhatWasStored() throws {
        let db = try SharedDatabase(path: dir.path("a.db"), schema: Self.schema)
        try db.execute("INSERT INTO notes(id, title, done) VALUES ('a', 'one', 1), ('b', 'two', 2), ('c', 'returning', 3)")
        let updated = try db.write { try $0.run("UPDATE notes SET done = '7' WHERE id IN ('a', 'b') RETURNING id, done, typeof(done) AS kind, title || '!' AS shout") }
        #expect(updated.resultSets[0].columns == ["id", "done", "kind", "shout"])
        #expect(
            updated.resultSets[0].rows.map(\.values) == [
                [.text("a"), .integer(7), .text("integer"), .text("one!")],
                [.text("b"), .integer(7), .text("integer"), .text("two!")],
            ])
        let unchanged = try db.write { try $0.fetchAll("UPDATE notes SET done = 7.0 WHERE id = 'a' RETURNING done") }
        #expect(unchanged.map(\.values) == [[.integer(7)]], "a matched row that did not change is returned as stored")
        let deleted = try db.write { try $0.fetchAll("DELETE FROM notes WHERE id = 'c' RETURNING id, title") }
        #expect(deleted.map(\.values) == [[.text("c"), .text("returning")]])
        let withParameter = try db.write { try $0.fetchAll("INSERT INTO notes(id, title) VALUES ('p', 'param') RETURNING id, ?", ["extra"]) }
        #expect(withParameter.map(\.values) == [[.text("p"), .text("extra")]])
        #expect(try db.fetchAll("SELECT count(*) FROM notes WHERE id = 'p'")[0][0] == .integer(1), "written once")
        // The word in a string, a comment or a subquery is not the clause.
        let tricky = try db.write {
            try $0.run(
                """
                INSERT INTO notes(title) SELECT 'RETURNING -- not a clause' FROM (SELECT 1 AS "returning") /* RETURNING */ RETURNING title, id; \
                INSERT INTO notes(id, title) VALUES ('last', 'x') RETURNING id
                """)
        }
        #expect(tricky.resultSets.map { $0.rows.count } == [1, 1])
        #expect(tricky.resultSets[0].rows[0][0] == .text("RETURNING -- not a clause") && tricky.resultSets[0].rows[0][1] != .null)
        #expect(tricky.resultSets[1].rows[0].values == [.text("last")])
        #expect(try db.uploadQueue.pendingCount() == 9, "3 inserts, 2 changed rows, a delete, 3 inserts: one entry each")
    }

    /// The stored row of `id`: the view's for a table that keeps rows, the queued PUT's for an
    /// insert-only table.
    private func stored(_ db: SharedDatabase, _ table: String, id: String) throws -> [DatabaseValue]? {
        if table != "events" { return try db.fetchAll("SELECT id, title, done, score FROM \(table) WHERE id = ?", [id]).first?.values }
        guard let entry = try db.uploadQueue.transactions(limit: 1000).flatMap(\.entries).first(where: { $0.table == table && $0.rowID == id }) else { return nil }
        return [.text(id)] + ["title", "done", "score"].map { entry.data?[$0]?.databaseValue ?? .null }
    }
}
