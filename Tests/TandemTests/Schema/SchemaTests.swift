import Foundation
import Testing
@testable import Tandem

@Suite struct SchemaTests {
    func rejects(_ json: String, mentioning parts: [String]) {
        do {
            _ = try Schema(json: Data(json.utf8))
            Issue.record("schema was accepted: \(json)")
        } catch let error as TandemError {
            for part in parts { #expect(error.description.contains(part), "\(error) should mention \(part)") }
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func parsesTheDocumentedJSON() throws {
        let json =
            #"{"tables":[{"name":"notes","columns":[{"name":"title","type":"text"},{"name":"done","type":"integer"}],"indexes":[{"name":"by_title","columns":["title"]}],"localOnly":false,"insertOnly":false}]}"#
        let schema = try Schema(json: Data(json.utf8))
        #expect(schema.tables.count == 1)
        #expect(schema.tables[0].columns == [.text("title"), .integer("done")])
        #expect(schema.tables[0].indexes == [IndexSchema(name: "by_title", columns: ["title"])])
    }

    @Test func rejectsBadSchemasNamingTableAndColumn() {
        rejects(#"{"tables":[{"name":"notes","columns":[{"name":"title","type":"txt"}]}]}"#, mentioning: ["notes", "title", "txt"])
        rejects(#"{"tables":[{"name":"notes","columns":[{"name":"a","type":"text"},{"name":"A","type":"text"}]}]}"#, mentioning: ["notes.A", "twice"])
        rejects(#"{"tables":[{"name":"ps_notes","columns":[{"name":"a","type":"text"}]}]}"#, mentioning: ["ps_notes", "reserved"])
        rejects(#"{"tables":[{"name":"sqlite_x","columns":[{"name":"a","type":"text"}]}]}"#, mentioning: ["sqlite_x", "reserved"])
        rejects(#"{"tables":[{"name":"bad name","columns":[{"name":"a","type":"text"}]}]}"#, mentioning: ["bad name"])
        rejects(#"{"tables":[{"name":"notes","columns":[{"name":"id","type":"text"}]}]}"#, mentioning: ["notes.id", "implicit"])
        rejects(#"{"tables":[{"name":"t","columns":[{"name":"a\"b","type":"text"}]}]}"#, mentioning: ["t.a\"b"])
        rejects(#"{"tables":[{"name":"t","columns":[]}]}"#, mentioning: ["'t'", "no columns"])
        rejects(#"{"tables":[{"name":"t","columns":[{"name":"a","type":"text"}]},{"name":"T","columns":[{"name":"a","type":"text"}]}]}"#, mentioning: ["'T'", "twice"])
        rejects(#"{"tables":[{"name":"t","columns":[{"name":"a","type":"text"}],"indexes":[{"name":"i","columns":["b"]}]}]}"#, mentioning: ["t.i", "'b'"])
        rejects(#"{"tables":[{"name":"t"}]}"#, mentioning: ["columns"])
        rejects(#"{"tables":[{"name":"t","columns":[{"name":"a","type":"text"}],"localOnly":true,"insertOnly":true}]}"#, mentioning: ["'t'"])
        rejects("{not json", mentioning: ["JSON"])
    }

    @Test func schemaFileErrorsNameTheFile() throws {
        let dir = try TemporaryDirectory()
        let file = dir.path("schema.json")
        try Data(#"{"tables":[{"name":"t","columns":[{"name":"a","type":"blob"}]}]}"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(
            throws: TandemError.invalidSchema(
                SchemaProblem(.unknownType, table: "t", column: "a", "\(file): table 't': column 'a' has unknown type 'blob' (use text, integer or real)"))
        ) {
            try Schema(contentsOf: URL(fileURLWithPath: file))
        }
        #expect(throws: TandemError.self) { try Schema(contentsOf: URL(fileURLWithPath: dir.path("missing.json"))) }
    }

    @Test func storesDataAsJSONBehindAView() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title, done, score) VALUES ('n1', 'hello', 1, 2.5)")
        let stored = try db.read { try $0.scalar("SELECT data FROM ps_data__notes WHERE id = 'n1'").stringValue }
        #expect(stored == #"{"title":"hello","done":1,"score":2.5}"#)
        let type = try db.read { try $0.scalar("SELECT type FROM sqlite_master WHERE name = 'notes'").stringValue }
        #expect(type == "view")
        let row = try #require(try db.fetchAll("SELECT id, title, done, score FROM notes").first)
        #expect(row.values == [.text("n1"), .text("hello"), .integer(1), .real(2.5)])
        let plan = try db.fetchAll("EXPLAIN QUERY PLAN SELECT * FROM notes WHERE title = 'hello'").map { $0[3].stringValue ?? "" }
        #expect(plan.joined().contains("ps_index__notes__by_title"))
    }

    @Test func storedSchemaOpensWithoutOneAndAddingAColumnNeedsNoMigration() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        do {
            let db = try SharedDatabase(path: path, schema: notesSchema)
            try db.execute("INSERT INTO notes(id, title) VALUES ('old', 'before')")
        }
        let reopened = try SharedDatabase(path: path)
        #expect(reopened.schema == notesSchema)

        var upgraded = notesSchema
        upgraded.tables[0].columns.append(.text("author"))
        let db = try SharedDatabase(path: path, schema: upgraded)
        try db.execute("INSERT INTO notes(id, title, author) VALUES ('new', 'after', 'ann')")
        let rows = try db.fetchAll("SELECT id, author FROM notes ORDER BY id")
        #expect(rows.map { $0.values } == [[.text("new"), .text("ann")], [.text("old"), .null]])
        #expect(try SharedDatabase(path: path).schema == upgraded)
    }

    @Test func rejectsACollisionWithAnExistingTable() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let sqlite = try Spawned(executable: "/usr/bin/sqlite3", [path, "CREATE TABLE notes(x)"])
        #expect(try sqlite.wait() == 0)
        #expect(
            throws: TandemError.invalidSchema(SchemaProblem(.nameCollision, table: "notes", "table 'notes' collides with an existing table of that name in '\(path)'"))
        ) {
            try SharedDatabase(path: path, schema: notesSchema)
        }
        let tables = try Spawned(executable: "/usr/bin/sqlite3", [path, "SELECT count(*) FROM notes"])
        try tables.wait()
        #expect(tables.output == ["0"])
    }

    @Test func openingWithoutASchemaNeedsAnInitialisedFile() throws {
        let dir = try TemporaryDirectory()
        #expect(throws: TandemError.notInitialized(path: dir.path("a.db"))) { try SharedDatabase(path: dir.path("a.db")) }
    }
}
