import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// A column rename rolled through a fleet on a real PostgreSQL server, as README's "Changing the
/// schema" walks through it: setup expands the rename, hosts of the old and the new schema edit
/// and sync at the same time and each reads every edit under its own name, a host migrates with
/// an edit pending, setup contracts, and a host left on the old schema is told.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct RollingRenameTests {
    static let v1 = MigrationTests.v1
    static let v2 = MigrationTests.v2

    func texts(_ db: SharedDatabase, _ column: String) throws -> [String: String] {
        var result: [String: String] = [:]
        for row in try db.fetchAll("SELECT id, \(column) FROM notes") { result[row[0].stringValue ?? ""] = row[1].stringValue ?? "NULL" }
        return result
    }

    func sync(_ paths: String..., url: String) throws {
        for path in paths {
            let result = try tandem(["sync", path, "--backend", url])
            #expect(result.status == 0, "sync \(path): \(result.stderr)")
        }
    }

    @Test func aRenameRollsThroughTheFleetWithBothVersionsSyncing() throws {
        let url = try TestPostgres.database(schema: Self.v1)
        let dir = try TemporaryDirectory()
        let (a, b, c) = (dir.path("a.db"), dir.path("b.db"), dir.path("c.db"))
        for path in [a, b, c] { try SharedDatabase(path: path, schema: Self.v1).close() }
        do {
            let db = try SharedDatabase(path: a, schema: Self.v1)
            try db.execute("INSERT INTO notes(id, title) VALUES ('r1', 'one'), ('r2', 'two'), ('r3', 'three')")
            db.close()
        }
        try sync(a, b, c, url: url)

        // 1. Expand on the server: heading added, filled from title, the two kept equal.
        let v2File = try dir.schemaFile(Self.v2, name: "v2.json")
        let expand = try tandem(["backend", "setup", url, "--schema", v2File])
        #expect(expand.status == 0, "\(expand.stderr)")
        let psql = try PostgresConnection(url)
        #expect(try psql.execute("SELECT count(*) FROM notes WHERE heading IS DISTINCT FROM title").first?.first == "0")

        // 2. b runs the new release; a stays on the old one; both edit and insert.
        let newB = try SharedDatabase(path: b, schema: Self.v2)
        try newB.execute("UPDATE notes SET heading = 'two, edited on b' WHERE id = 'r2'")
        try newB.execute("INSERT INTO notes(id, heading) VALUES ('r5', 'five, from b')")
        newB.close()
        let oldA = try SharedDatabase(path: a, schema: Self.v1)
        try oldA.execute("UPDATE notes SET title = 'one, edited on a' WHERE id = 'r1'")
        try oldA.execute("INSERT INTO notes(id, title) VALUES ('r4', 'four, from a')")
        try oldA.execute("INSERT OR REPLACE INTO notes(id, title) VALUES ('r3', 'three, replaced on a')")
        oldA.close()
        try sync(a, b, a, b, url: url)
        let everything = [
            "r1": "one, edited on a", "r2": "two, edited on b", "r3": "three, replaced on a", "r4": "four, from a", "r5": "five, from b",
        ]
        do {
            let oldA = try SharedDatabase(path: a, schema: Self.v1), newB = try SharedDatabase(path: b, schema: Self.v2)
            #expect(try texts(oldA, "title") == everything, "the old release reads every edit under the old name")
            #expect(try texts(newB, "heading") == everything, "the new release reads every edit under the new name")
            oldA.close()
            newB.close()
        }
        #expect(try psql.execute("SELECT count(*) FROM notes WHERE heading IS DISTINCT FROM title").first?.first == "0")

        // 3. a migrates with an edit waiting for upload: the edit moves to the new name and uploads.
        do {
            let oldA = try SharedDatabase(path: a, schema: Self.v1)
            try oldA.execute("UPDATE notes SET title = 'three, pending on a' WHERE id = 'r3'")
            oldA.close()
        }
        let newA = try SharedDatabase(path: a, schema: Self.v2)
        #expect(try texts(newA, "heading")["r3"] == "three, pending on a")
        newA.close()
        try sync(a, b, url: url)

        // 4. Contract: the old column and the trigger go; the new release keeps syncing.
        let contract = try tandem(["backend", "setup", url, "--schema", v2File, "--contract"])
        #expect(contract.status == 0, "\(contract.stderr)")
        #expect(try psql.execute("SELECT count(*) FROM pg_attribute WHERE attrelid = 'notes'::regclass AND attname = 'title' AND NOT attisdropped").first?.first == "0")
        do {
            let newB = try SharedDatabase(path: b, schema: Self.v2)
            try newB.execute("UPDATE notes SET heading = 'one, after the contract' WHERE id = 'r1'")
            newB.close()
        }
        try sync(b, a, url: url)
        var final = everything
        final["r3"] = "three, pending on a"
        final["r1"] = "one, after the contract"
        for path in [a, b] {
            let db = try SharedDatabase(path: path, schema: Self.v2)
            #expect(try texts(db, "heading") == final, "\(path)")
            db.close()
        }

        // 5. A host left on the old release is told: its upload of the old column is set aside, named.
        do {
            let oldC = try SharedDatabase(path: c, schema: Self.v1)
            try oldC.execute("UPDATE notes SET title = 'late' WHERE id = 'r2'")
            oldC.close()
        }
        let refused = try tandem(["sync", c, "--backend", url])
        #expect(refused.status != 0 && refused.stderr.contains("column title is not in the server's table"), "\(refused.stderr)")
        let status = try tandem(["status", c, "--json"])
        #expect(status.stdout.contains("title"), "\(status.stdout)")
        let oldC = try SharedDatabase(path: c, schema: Self.v1)
        defer { oldC.close() }
        #expect(try oldC.uploadQueue.rejected().count == 1)
    }
}

/// Rows a server sends under a column's old name (the embedded backend's server keeps the names
/// rows were uploaded with) are stored under its new one: a host migrated, or made new with the
/// new schema, reads them in the renamed column, through a full download too.
@Suite struct RenamedDownloadTests {
    @Test func rowsDownloadedUnderAnOldNameReadInTheRenamedColumn() throws {
        let dir = try TemporaryDirectory()
        let server = "sqlite:" + dir.path("server.db")
        let (a, b) = (dir.path("a.db"), dir.path("b.db"))
        let v1 = MigrationTests.v1, v2 = MigrationTests.v2
        do {
            let db = try SharedDatabase(path: a, schema: v1)
            try db.execute("INSERT INTO notes(id, title, n) VALUES ('r1', 'one', 1), ('r2', ?, 2)", ["a\u{0}b"])
            db.close()
        }
        #expect(try tandem(["sync", a, "--backend", server]).status == 0)
        // A new host of the new release downloads rows the server holds under the old name.
        try SharedDatabase(path: b, schema: v2).close()
        #expect(try tandem(["sync", b, "--backend", server]).status == 0)
        let expected: [[DatabaseValue]] = [[.text("r1"), .text("one"), .integer(1)], [.text("r2"), .text("a\u{0}b"), .integer(2)]]
        do {
            let db = try SharedDatabase(path: b, schema: v2)
            #expect(try db.fetchAll("SELECT id, heading, n FROM notes ORDER BY id").map(\.values) == expected)
            db.close()
        }
        // The first host migrates, then downloads everything again.
        try SharedDatabase(path: a, schema: v2).close()
        #expect(try tandem(["backend", "reset", a]).status == 0)
        #expect(try tandem(["sync", a, "--backend", server]).status == 0)
        let db = try SharedDatabase(path: a, schema: v2)
        defer { db.close() }
        #expect(try db.fetchAll("SELECT id, heading, n FROM notes ORDER BY id").map(\.values) == expected)
    }
}
