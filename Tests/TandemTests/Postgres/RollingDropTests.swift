import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// A column and a table dropped by a migration, rolled through a fleet: the server keeps serving
/// them while hosts of the old release still use them (expand), a migrated host never stores them
/// again from what it downloads, and `--contract` drops them on the server.
enum RollingDrops {
    static let v1 = Schema(tables: [
        TableSchema(name: "notes", columns: [.text("title"), .text("body"), .integer("n")]), TableSchema(name: "drafts", columns: [.text("text")]),
    ])
    static let drop = Migration(
        "drop-body-and-drafts", uploads: .none,
        steps: [.dropColumn(table: "notes", column: "body", discardValues: true), .dropTable(table: "drafts", discardRows: true)])
    static let v2 = Schema(tables: [TableSchema(name: "notes", columns: [.text("title"), .integer("n")])], migrations: [drop])

    /// The rows of `notes` whose stored JSON holds `body`, and the rows kept for tables the
    /// file does not declare.
    static func stored(_ path: String) throws -> (holdingBody: [String], untyped: Int64) {
        let db = try SharedDatabase(path: path)
        defer { db.close() }
        return try db.read { tx in
            let holding = try tx.fetchAll("SELECT id FROM ps_data__notes WHERE json_type(data, '$.body') IS NOT NULL ORDER BY id").compactMap { $0[0].stringValue }
            return (holding, try tx.scalar("SELECT count(*) FROM ps_untyped").int64Value ?? -1)
        }
    }

    static func sync(_ paths: [String], url: String) throws {
        for path in paths {
            let result = try tandem(["sync", path, "--backend", url])
            #expect(result.status == 0, "sync \(path): \(result.stderr)")
        }
    }
}

@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct RollingDropTests {
    @Test func aDropRollsThroughTheFleetWithBothVersionsSyncing() throws {
        let url = try TestPostgres.database(schema: RollingDrops.v1)
        let dir = try TemporaryDirectory()
        let (a, b) = (dir.path("a.db"), dir.path("b.db"))
        do {
            let db = try SharedDatabase(path: a, schema: RollingDrops.v1)
            try db.execute("INSERT INTO notes(id, title, body, n) VALUES ('r1', 'one', 'body one', 1), ('r2', 'two', ?, 2)", ["a\u{0}b {\"x\":1}"])
            try db.execute("INSERT INTO drafts(id, text) VALUES ('d1', 'draft')")
            db.close()
        }
        try SharedDatabase(path: b, schema: RollingDrops.v1).close()
        try RollingDrops.sync([a, b], url: url)

        // 1. Expand: the server keeps body and drafts; b migrates (its values leave b).
        let v2File = try dir.schemaFile(RollingDrops.v2, name: "v2.json")
        let expand = try tandem(["backend", "setup", url, "--schema", v2File])
        #expect(expand.status == 0, "\(expand.stderr)")
        let psql = try PostgresConnection(url)
        #expect(try psql.execute("SELECT body FROM notes WHERE id = 'r1'").first?.first == "body one")
        try SharedDatabase(path: b, schema: RollingDrops.v2).close()

        // A migrated host's PUT (INSERT OR REPLACE) leaves the dropped column to the old release.
        do {
            let newB = try SharedDatabase(path: b, schema: RollingDrops.v2)
            try newB.execute("INSERT OR REPLACE INTO notes(id, title, n) VALUES ('r2', 'two', 2)")
            newB.close()
        }
        try RollingDrops.sync([b], url: url)
        #expect(try psql.execute("SELECT body IS NOT NULL FROM notes WHERE id = 'r2'").first?.first == "t")

        // 2. a, on the old release, edits body and drafts and the title; b edits the title.
        do {
            let oldA = try SharedDatabase(path: a, schema: RollingDrops.v1)
            try oldA.execute("UPDATE notes SET body = 'body one, edited on a', title = 'one, edited on a' WHERE id = 'r1'")
            try oldA.execute("INSERT INTO drafts(id, text) VALUES ('d2', 'another draft')")
            oldA.close()
            let newB = try SharedDatabase(path: b, schema: RollingDrops.v2)
            try newB.execute("UPDATE notes SET title = 'two, edited on b' WHERE id = 'r2'")
            newB.close()
        }
        try RollingDrops.sync([a, b, a], url: url)
        let oldA = try SharedDatabase(path: a, schema: RollingDrops.v1)
        #expect(
            try oldA.fetchAll("SELECT id, title, body FROM notes ORDER BY id").map(\.values) == [
                [.text("r1"), .text("one, edited on a"), .text("body one, edited on a")], [.text("r2"), .text("two, edited on b"), .text("a\u{0}b {\"x\":1}")],
            ], "the old release keeps every edit, body included")
        #expect(try oldA.fetchAll("SELECT id FROM drafts ORDER BY id").map { $0[0] } == [.text("d1"), .text("d2")])
        oldA.close()
        let onB = try RollingDrops.stored(b)
        #expect(onB.holdingBody.isEmpty, "a migrated host stores no dropped column it downloads")
        #expect(onB.untyped == 0, "nor the rows of a dropped table")
        do {
            let newB = try SharedDatabase(path: b, schema: RollingDrops.v2)
            #expect(
                try newB.fetchAll("SELECT id, title, n FROM notes ORDER BY id").map(\.values) == [
                    [.text("r1"), .text("one, edited on a"), .integer(1)], [.text("r2"), .text("two, edited on b"), .integer(2)],
                ])
            newB.close()
        }
        #expect(try psql.execute("SELECT body FROM notes WHERE id = 'r1'").first?.first == "body one, edited on a")
        for path in [a, b] {
            let verify = try tandem(["verify", path, "--backend", url])
            #expect(verify.status == 0, "hosts of both releases agree with the server: \(verify.stdout) \(verify.stderr)")
        }

        // 3. Contract: body and drafts leave the server; a host left on the old release is told.
        let contract = try tandem(["backend", "setup", url, "--schema", v2File, "--contract"])
        #expect(contract.status == 0, "\(contract.stderr)")
        #expect(try PostgresSetup.existingColumns(of: "notes", on: psql).keys.sorted() == ["id", "n", "title"])
        #expect(try psql.execute("SELECT to_regclass('drafts') IS NULL, (SELECT count(*) FROM tandem_tables WHERE table_name = 'drafts')").first == ["t", "0"])
        let left = try psql.execute("SELECT proname FROM pg_proc WHERE proname LIKE 'tandem\\_%\\_drafts'")
        #expect(left.isEmpty, "\(left)")
        do {
            let oldA = try SharedDatabase(path: a, schema: RollingDrops.v1)
            try oldA.execute("UPDATE notes SET body = 'late' WHERE id = 'r1'")
            oldA.close()
        }
        let refused = try tandem(["sync", a, "--backend", url])
        #expect(refused.status != 0 && refused.stderr.contains("column body is not in the server's table"), "\(refused.stderr)")
        try RollingDrops.sync([b], url: url)
        #expect(try RollingDrops.stored(b).holdingBody.isEmpty)
    }
    /// A host's queue holding PUTs from before and after its migration (one naming the dropped
    /// column, one not) uploads them as two runs: the later PUT leaves the column to older hosts.
    @Test func putsFromBeforeAndAfterAMigrationUploadApart() throws {
        let url = try TestPostgres.database(schema: RollingDrops.v1)
        let psql = try PostgresConnection(url)
        try psql.execute("INSERT INTO notes(id, title, body, n) VALUES ('r2', 'two', 'body two', 2)")
        let dir = try TemporaryDirectory()
        let host = dir.path("host.db")
        try SharedDatabase(path: host, schema: RollingDrops.v1).close()
        try RollingDrops.sync([host], url: url)
        try PostgresBackend.setup(conninfo: url, schema: RollingDrops.v2)
        do {
            let old = try SharedDatabase(path: host, schema: RollingDrops.v1)
            try old.execute("INSERT INTO notes(id, title, body, n) VALUES ('r1', 'one', 'body one', 1)")
            old.close()
            let new = try SharedDatabase(path: host, schema: RollingDrops.v2)
            try new.execute("INSERT OR REPLACE INTO notes(id, title, n) VALUES ('r2', 'two, replaced', 2)")
            new.close()
        }
        try RollingDrops.sync([host], url: url)
        #expect(
            try psql.execute("SELECT string_agg(id || '=' || title || '/' || coalesce(body, 'NULL'), ',' ORDER BY id) FROM notes").first?.first
                == "r1=one/body one,r2=two, replaced/body two")
    }

    /// A column renamed, then dropped by a later release: expanding keeps both names for the
    /// older hosts; contracting drops both and the trigger that kept them equal, and writes go on.
    @Test func aColumnRenamedThenDroppedContractsCleanly() throws {
        let v1 = Schema(tables: [TableSchema(name: "notes", columns: [.text("title"), .integer("n")])])
        let rename = Migration("rename", uploads: .none, steps: [.renameColumn(table: "notes", from: "title", to: "heading")])
        let v2 = Schema(tables: [TableSchema(name: "notes", columns: [.text("heading"), .integer("n")])], migrations: [rename])
        let drop = Migration("drop", uploads: .none, steps: [.dropColumn(table: "notes", column: "heading", discardValues: true)])
        let v3 = Schema(tables: [TableSchema(name: "notes", columns: [.integer("n")])], migrations: [rename, drop])
        let url = try TestPostgres.database(schema: v1)
        let psql = try PostgresConnection(url)
        try psql.execute("INSERT INTO notes(id, title, n) VALUES ('r1', 'one', 1)")
        try PostgresBackend.setup(conninfo: url, schema: v2)
        try PostgresBackend.setup(conninfo: url, schema: v3)
        try psql.execute("UPDATE notes SET title = 'one, from an old host' WHERE id = 'r1'")
        #expect(try psql.execute("SELECT heading FROM notes WHERE id = 'r1'").first?.first == "one, from an old host", "still kept equal while expanding")
        try PostgresBackend.setup(conninfo: url, schema: v3, contract: true)
        #expect(try PostgresSetup.existingColumns(of: "notes", on: psql).keys.sorted() == ["id", "n"])
        try psql.execute("INSERT INTO notes(id, n) VALUES ('r2', 2)")
        try psql.execute("UPDATE notes SET n = 3 WHERE id = 'r1'")
        let dir = try TemporaryDirectory()
        let host = dir.path("host.db")
        try SharedDatabase(path: host, schema: v3).close()
        try RollingDrops.sync([host], url: url)
        let db = try SharedDatabase(path: host, schema: v3)
        defer { db.close() }
        try db.execute("INSERT INTO notes(id, n) VALUES ('r4', 4)")
        db.close()
        try RollingDrops.sync([host], url: url)
        #expect(try psql.execute("SELECT string_agg(id || '=' || n, ',' ORDER BY id) FROM notes").first?.first == "r1=3,r2=2,r4=4")
    }
}

/// The embedded backend's server keeps the keys rows were uploaded with: a host that dropped a
/// column or a table stores neither from what it downloads, through a full download too, and a
/// column declared again reads what the server sends.
@Suite struct DroppedDownloadTests {
    @Test func aMigratedHostStoresNoDroppedColumnOrTableItDownloads() throws {
        let dir = try TemporaryDirectory()
        let server = "sqlite:" + dir.path("server.db")
        let (a, b) = (dir.path("a.db"), dir.path("b.db"))
        do {
            let db = try SharedDatabase(path: a, schema: RollingDrops.v1)
            try db.execute("INSERT INTO notes(id, title, body, n) VALUES ('r1', 'one', 'body one', 1)")
            try db.execute("INSERT INTO drafts(id, text) VALUES ('d1', 'draft')")
            db.close()
            try SharedDatabase(path: b, schema: RollingDrops.v1).close()
        }
        try RollingDrops.sync([a, b], url: server)
        try SharedDatabase(path: b, schema: RollingDrops.v2).close()
        #expect(try RollingDrops.stored(b).holdingBody.isEmpty)
        do {
            let oldA = try SharedDatabase(path: a, schema: RollingDrops.v1)
            try oldA.execute("UPDATE notes SET body = 'edited', n = ? WHERE id = 'r1'", [Int64.max])
            try oldA.execute("INSERT INTO drafts(id, text) VALUES ('d2', 'another')")
            oldA.close()
        }
        try RollingDrops.sync([a, b], url: server)
        #expect(try RollingDrops.stored(b) == (holdingBody: [], untyped: 0))
        #expect(try tandem(["backend", "reset", b]).status == 0)
        try RollingDrops.sync([b], url: server)
        #expect(try RollingDrops.stored(b) == (holdingBody: [], untyped: 0), "a full download too")

        // A later release declares body again (an addition): it reads what the server has.
        let v3 = Schema(tables: [TableSchema(name: "notes", columns: [.text("title"), .integer("n"), .text("body")])], migrations: [RollingDrops.drop])
        try SharedDatabase(path: b, schema: v3).close()
        #expect(try tandem(["backend", "reset", b]).status == 0)
        try RollingDrops.sync([b], url: server)
        let db = try SharedDatabase(path: b, schema: v3)
        defer { db.close() }
        #expect(try db.fetchAll("SELECT body FROM notes").map { $0[0] } == [.text("edited")])
    }
}
