import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// A backfill rolled through a fleet on a real PostgreSQL server: each host computes the new
/// column itself (uploads `none`), and setup runs the migration's PostgreSQL statement once on
/// the server, so that every host, the server and a new host hold the same values, and a row's next
/// change from another host never brings a NULL back.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct ServerFillTests {
    static let v1 = Schema(tables: [TableSchema(name: "notes", columns: [.text("title"), .integer("n")])])
    static let fill = Migration(
        "slug", uploads: .none, steps: [.fill(table: "notes", column: "slug", value: "lower(title) || '-' || n", where: "n > 0")],
        server: ["UPDATE notes SET slug = lower(title) || '-' || n WHERE n > 0"])
    static let v2 = Schema(tables: [TableSchema(name: "notes", columns: [.text("title"), .integer("n"), .text("slug")])], migrations: [fill])

    func slugs(_ path: String) throws -> [String: String] {
        let db = try SharedDatabase(path: path)
        defer { db.close() }
        var result: [String: String] = [:]
        for row in try db.fetchAll("SELECT id, slug FROM notes") { result[row[0].stringValue ?? ""] = row[1].stringValue ?? "NULL" }
        return result
    }

    func sync(_ paths: String..., url: String) throws {
        for path in paths {
            let result = try tandem(["sync", path, "--backend", url])
            #expect(result.status == 0, "sync \(path): \(result.stderr)")
        }
    }

    @Test func aBackfillReachesTheServerOnceAndEveryHostAgrees() throws {
        let url = try TestPostgres.database(schema: Self.v1)
        let dir = try TemporaryDirectory()
        let (a, b, c) = (dir.path("a.db"), dir.path("b.db"), dir.path("c.db"))
        do {
            let db = try SharedDatabase(path: a, schema: Self.v1)
            try db.execute("INSERT INTO notes(id, title, n) VALUES ('r1', 'One', 1), ('r2', 'Two', 2), ('r3', 'Zero', 0), ('r4', ?, 4)", ["A\\B \"q\" {}"])
            db.close()
        }
        try SharedDatabase(path: b, schema: Self.v1).close()
        try sync(a, b, url: url)

        // A statement that fails refuses the setup, naming the migration, and changes nothing.
        var broken = Self.fill
        broken.server = ["UPDATE notes SET slug = no_such_function(title)"]
        let refused = try tandem(["backend", "setup", url, "--schema", try dir.schemaFile(Schema(tables: Self.v2.tables, migrations: [broken]), name: "broken.json")])
        #expect(refused.status != 0 && refused.stderr.contains("migration 'slug'") && refused.stderr.contains("no_such_function"), "\(refused.stderr)")
        let psql = try PostgresConnection(url)
        #expect(try psql.execute("SELECT count(*) FROM information_schema.columns WHERE table_name = 'notes' AND column_name = 'slug'").first?.first == "0")

        // Setup fills the server; both hosts migrate and compute the same values; they agree.
        let v2File = try dir.schemaFile(Self.v2, name: "v2.json")
        let setup = try tandem(["backend", "setup", url, "--schema", v2File])
        #expect(setup.status == 0, "\(setup.stderr)")
        let expected = ["r1": "one-1", "r2": "two-2", "r3": "NULL", "r4": "a\\b \"q\" {}-4"]
        var server: [String: String] = [:]
        for row in try psql.execute("SELECT id, coalesce(slug, 'NULL') FROM notes") { server[row[0] ?? ""] = row[1] ?? "" }
        #expect(server == expected)
        for path in [a, b] { try SharedDatabase(path: path, schema: Self.v2).close() }
        #expect(try slugs(a) == expected && slugs(b) == expected)

        // Another host's edit of a row downloads the whole row, the server's slug with it.
        do {
            let db = try SharedDatabase(path: b, schema: Self.v2)
            try db.execute("UPDATE notes SET title = 'Two, edited' WHERE id = 'r2'")
            db.close()
        }
        try sync(b, a, url: url)
        #expect(try slugs(a)["r2"] == "two-2")
        let verify = try tandem(["verify", a, "--backend", url])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")

        // A new host downloads the server's values; setup run again does not fill again.
        try psql.execute("UPDATE notes SET slug = 'kept' WHERE id = 'r1'")
        let again = try tandem(["backend", "setup", url, "--schema", v2File])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try psql.execute("SELECT slug FROM notes WHERE id = 'r1'").first?.first == "kept")
        try SharedDatabase(path: c, schema: Self.v2).close()
        try sync(c, url: url)
        #expect(try slugs(c)["r1"] == "kept" && slugs(c)["r2"] == "two-2")
    }

    /// Server statements are written for the tables of their migration: a later rename does
    /// not break them, on a new server (which has no rows to change: they are recorded, not
    /// run) nor on one several migrations behind set up and contracted in one go (they run
    /// before the contract drops the old column).
    @Test func statementsOfAnEarlierMigrationSurviveALaterRename() throws {
        let slug = Migration(
            "1-slug", uploads: .none, steps: [.fill(table: "notes", column: "slug", value: "lower(title)")], server: ["UPDATE notes SET slug = lower(title)"])
        let rename = Migration("2-rename", uploads: .none, steps: [.renameColumn(table: "notes", from: "title", to: "heading")])
        let v3 = Schema(tables: [TableSchema(name: "notes", columns: [.text("heading"), .integer("n"), .text("slug")])], migrations: [slug, rename])
        let dir = try TemporaryDirectory()
        let v3File = try dir.schemaFile(v3, name: "v3.json")

        let fresh = try TestPostgres.emptyDatabase()
        let setUp = try tandem(["backend", "setup", fresh, "--schema", v3File])
        #expect(setUp.status == 0, "\(setUp.stderr)")
        #expect(try PostgresConnection(fresh).execute("SELECT count(*) FROM tandem_meta WHERE key LIKE 'server_sql:%'").first?.first == "1")

        let behind = try TestPostgres.database(schema: Self.v1)
        let a = dir.path("a.db")
        do {
            let db = try SharedDatabase(path: a, schema: Self.v1)
            try db.execute("INSERT INTO notes(id, title, n) VALUES ('r1', 'One', 1), ('r2', 'TWO', 2)")
            db.close()
        }
        try sync(a, url: behind)
        let contracted = try tandem(["backend", "setup", behind, "--schema", v3File, "--contract"])
        #expect(contracted.status == 0, "\(contracted.stderr)")
        let psql = try PostgresConnection(behind)
        #expect(try psql.execute("SELECT id, heading, slug FROM notes ORDER BY id").map { $0.compactMap { $0 } } == [["r1", "One", "one"], ["r2", "TWO", "two"]])
        #expect(try psql.execute("SELECT count(*) FROM information_schema.columns WHERE table_name = 'notes' AND column_name = 'title'").first?.first == "0")
    }

    /// A table setup adopts (the application's own, with its rows) is not a new server's: the
    /// statements run on its rows, once.
    @Test func statementsRunOnATableSetupAdopts() throws {
        let url = try TestPostgres.emptyDatabase()
        let psql = try PostgresConnection(url)
        try psql.execute("CREATE TABLE notes(id text PRIMARY KEY, title text, n bigint)")
        try psql.execute("INSERT INTO notes VALUES ('r1', 'Hello', 1), ('r2', 'World', 2)")
        let dir = try TemporaryDirectory()
        let file = try dir.schemaFile(Self.v2, name: "v2.json")
        for _ in 0..<2 {
            let setUp = try tandem(["backend", "setup", url, "--schema", file])
            #expect(setUp.status == 0, "\(setUp.stderr)")
        }
        #expect(try psql.execute("SELECT id, slug FROM notes ORDER BY id").map { $0.compactMap { $0 } } == [["r1", "hello-1"], ["r2", "world-2"]])
        try psql.execute("UPDATE notes SET slug = 'kept' WHERE id = 'r1'")
        #expect(try tandem(["backend", "setup", url, "--schema", file]).status == 0)
        #expect(try psql.execute("SELECT slug FROM notes WHERE id = 'r1'").first?.first == "kept")
    }
}
