import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

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
        return try tandem(["init", db, "--schema", schemaFile])
    }

    func stored(_ table: String, _ id: String) throws -> String {
        try SharedDatabase(path: db).read { try $0.scalar("SELECT data FROM \(table) WHERE id = ?", [id]).stringValue ?? "" }
    }

    /// An UPDATE writes only the columns it changed: a column re-declared with another type keeps
    /// its stored text, and `tandem init` says which columns changed type.
    @Test func updatesLeaveUntouchedColumnsAsStored() throws {
        #expect(try declare(title: "text", n: "integer").status == 0)
        for table in ["loc", "mine"] {
            #expect(try tandem(["exec", db, "INSERT INTO \(table)(id, title, n) VALUES ('x', 'keep me', 1)"]).status == 0)
        }
        let redeclared = try declare(title: "integer", n: "integer")
        #expect(redeclared.status == 0)
        #expect(redeclared.stdout.contains("loc.title changed type from text to integer"), "\(redeclared.stdout)")
        for table in ["loc", "mine"] {
            #expect(try tandem(["exec", db, "UPDATE \(table) SET n = 2"]).status == 0)
        }
        #expect(try declare(title: "text", n: "integer").status == 0)
        let rows = try SharedDatabase(path: db).fetchAll("SELECT title, n FROM loc UNION ALL SELECT title, n FROM mine")
        #expect(rows.map { [$0[0], $0[1]] } == [[.text("keep me"), .integer(2)], [.text("keep me"), .integer(2)]])
        let patch = try SharedDatabase(path: db).uploadQueue.transactions(limit: 10).last?.entries.last
        #expect(patch?.op == .patch && patch?.data == ["n": .integer(2)])
    }

    /// A real stored in an integer column (written while the column was declared real) stays a
    /// real when another column is updated; local data equals what the CRUD entries say, and
    /// the server's row after sync.
    @Test func localDataEqualsTheUploadedRow() throws {
        #expect(try declare(title: "text", n: "real").status == 0)
        #expect(try tandem(["exec", db, "INSERT INTO loc(id, title, n) VALUES ('x', 'a', ?)", "--args-json", "[2.5]"]).status == 0)
        #expect(try declare(title: "text", n: "integer").status == 0)
        #expect(try tandem(["exec", db, "UPDATE loc SET title = 'b'"]).status == 0)
        #expect(try tandem(["exec", db, "UPDATE loc SET title = 'b'"]).status == 0)  // no change: no entry
        #expect(try JSONValue(parsing: stored("ps_data__loc", "x")) == JSONValue(parsing: #"{"n":2.5,"title":"b"}"#))
        let entries = try SharedDatabase(path: db).uploadQueue.transactions(limit: 10).flatMap(\.entries)
        #expect(entries.map(\.op) == [.put, .patch])
        #expect(entries.last?.data == ["title": .string("b")])
        let server = dir.path("server.db")
        #expect(try tandem(["sync", db, "--backend", "sqlite:" + server]).status == 0)
        let serverRow = try EmbeddedBackend(path: server).rows().first { $0.id == "x" }
        #expect(try JSONValue(parsing: serverRow?.data ?? "") == JSONValue(parsing: try stored("ps_data__loc", "x")))
        #expect(try JSONValue(parsing: stored("ps_data__loc", "x")) == JSONValue(parsing: #"{"n":2.5,"title":"b"}"#))
    }

    /// A BLOB or an infinite real through a view is refused with the column named; nothing is written.
    @Test func valuesJSONCannotHoldAreRefusedNamingTheColumn() throws {
        #expect(try declare(title: "text", n: "integer").status == 0)
        let blob = try tandem(["exec", db, "INSERT INTO loc(id, title) VALUES ('b', x'00ff')"])
        #expect(blob.status == 1)
        #expect(blob.stderr.contains("loc.title: a BLOB cannot be stored"), "\(blob.stderr)")
        let infinite = try tandem(["exec", db, "INSERT INTO loc(id, n) VALUES ('i', 1e999)"])
        #expect(infinite.stderr.contains("loc.n: an infinite real cannot be stored"), "\(infinite.stderr)")
        #expect(try count(SharedDatabase(path: db), "SELECT count(*) FROM ps_data__loc") == 0)
    }
}
