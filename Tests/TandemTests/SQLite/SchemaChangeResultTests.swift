import Foundation
import Testing
@testable import Tandem

/// A statement this process prepared and cached before another process changed the schema
/// (a column added, renamed) is prepared again by SQLite at its next step: every way rows are
/// returned gives the new columns' names and all their values, never the names (or the number
/// of columns) the statement had when it was first prepared.
@Suite struct SchemaChangeResultTests {
    static let wider = Schema(tables: [
        TableSchema(
            name: "notes", columns: [.text("title"), .integer("done"), .real("score"), .text("extra")],
            indexes: [IndexSchema(name: "by_title", columns: ["title"])])
    ])

    @Test func cachedStatementsReturnTheNewColumnsAfterAnotherProgramChangesTheSchema() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try SharedDatabase(path: path, schema: notesSchema)
        defer { db.close() }
        try await db.write { tx in try tx.execute("INSERT INTO notes(id, title) VALUES ('a', 'A')") }
        let sql = "SELECT * FROM notes"
        #expect(try await db.read { try $0.fetchAll(sql) }.first?.columns == ["id", "title", "done", "score"])
        #expect(try await db.write { try $0.run(sql) }.resultSets.first?.columns == ["id", "title", "done", "score"])
        var live = db.watch(sql).makeAsyncIterator()
        #expect(try await live.next(within: 10, "the first result")?.first?.columns == ["id", "title", "done", "score"])

        // Another program (a process of the next release) adds a column and fills it.
        #expect(try runTandem(["init", path, "--schema", try dir.schemaFile(Self.wider)]).status == 0)
        #expect(try runTandem(["exec", path, "UPDATE notes SET extra = 'E'"]).status == 0)

        let expected = Row(columns: ["id", "title", "done", "score", "extra"], values: [.text("a"), .text("A"), .null, .null, .text("E")])
        #expect(try await db.read { try $0.fetchAll(sql) } == [expected])
        #expect(try await db.write { try $0.run(sql) }.resultSets.first?.rows == [expected])
        var last: [Row]?
        while last != [expected] { last = try await live.next(within: 10, "the live query's rows with the new column") }
        #expect(last == [expected])
    }
}
