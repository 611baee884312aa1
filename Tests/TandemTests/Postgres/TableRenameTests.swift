import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// A table renamed by a migration, rolled out in one window on a real PostgreSQL server: setup
/// renames the server's table with its rows and installs its triggers under the new name; hosts
/// keep syncing every row under the new name, a host that was away gets the edits logged under
/// the old name, a new host downloads everything, and a host left on the old release is told.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct TableRenameTests {
    static let v1 = Schema(tables: [TableSchema(name: "notes", columns: [.text("title"), .integer("n")])])
    static let rename = Migration("notes-to-memos", uploads: .none, steps: [.renameTable(from: "notes", to: "memos")])
    static let v2 = Schema(tables: [TableSchema(name: "memos", columns: [.text("title"), .integer("n")])], migrations: [rename])

    func rows(_ path: String, schema: Schema, table: String) throws -> [[DatabaseValue]] {
        let db = try SharedDatabase(path: path, schema: schema)
        defer { db.close() }
        return try db.fetchAll("SELECT id, title, n FROM \(table) ORDER BY id").map(\.values)
    }

    @Test func aTableRenameRollsOutInOneWindow() throws {
        let url = try TestPostgres.database(schema: Self.v1)
        let dir = try TemporaryDirectory()
        let (a, b, away, old, fresh) = (dir.path("a.db"), dir.path("b.db"), dir.path("away.db"), dir.path("old.db"), dir.path("fresh.db"))
        do {
            let db = try SharedDatabase(path: a, schema: Self.v1)
            try db.execute("INSERT INTO notes(id, title, n) VALUES ('r1', 'one', 1), ('r2', ?, ?)", ["a\u{0}b", Int64.max])
            db.close()
        }
        for path in [b, away, old] { try SharedDatabase(path: path, schema: Self.v1).close() }
        try RollingDrops.sync([a, b, away, old], url: url)
        // Edits the host that is away has not downloaded, logged under the old name.
        do {
            let db = try SharedDatabase(path: b, schema: Self.v1)
            try db.execute("UPDATE notes SET title = 'one, edited before the rename' WHERE id = 'r1'")
            try db.execute("INSERT INTO notes(id, title, n) VALUES ('r3', 'three', 3)")
            db.close()
        }
        try RollingDrops.sync([b], url: url)

        // The window: hosts migrate, setup renames the server's table.
        for path in [a, b, away] { try SharedDatabase(path: path, schema: Self.v2).close() }
        let setup = try tandem(["backend", "setup", url, "--schema", try dir.schemaFile(Self.v2, name: "v2.json")])
        #expect(setup.status == 0, "\(setup.stderr)")
        let psql = try PostgresConnection(url)
        #expect(
            try psql.execute("SELECT to_regclass('notes') IS NULL, (SELECT count(*) FROM memos), (SELECT count(*) FROM tandem_tables WHERE table_name = 'notes')").first == [
                "t", "3", "0",
            ])
        let left = try psql.execute("SELECT proname FROM pg_proc WHERE proname LIKE 'tandem\\_%\\_notes'")
        #expect(left.isEmpty, "\(left)")

        do {
            let db = try SharedDatabase(path: a, schema: Self.v2)
            try db.execute("UPDATE memos SET n = 10 WHERE id = 'r1'")
            db.close()
        }
        try RollingDrops.sync([a, b, away, a], url: url)
        let expected: [[DatabaseValue]] = [
            [.text("r1"), .text("one, edited before the rename"), .integer(10)], [.text("r2"), .text("a\u{0}b"), .integer(.max)],
            [.text("r3"), .text("three"), .integer(3)],
        ]
        for path in [a, b, away] { #expect(try rows(path, schema: Self.v2, table: "memos") == expected, "\(path)") }
        try SharedDatabase(path: fresh, schema: Self.v2).close()
        try RollingDrops.sync([fresh], url: url)
        #expect(try rows(fresh, schema: Self.v2, table: "memos") == expected)
        for path in [a, away] {
            let verify = try tandem(["verify", path, "--backend", url])
            #expect(verify.status == 0, "\(path): \(verify.stdout) \(verify.stderr)")
        }

        // A host left on the old release: its upload of the old table is set aside, named.
        do {
            let db = try SharedDatabase(path: old, schema: Self.v1)
            try db.execute("UPDATE notes SET title = 'late' WHERE id = 'r2'")
            db.close()
        }
        let refused = try tandem(["sync", old, "--backend", url])
        #expect(
            refused.status != 0
                && refused.stderr.contains("the server has no synced table notes: when the server's schema is newer (the table renamed or dropped), migrate this host"),
            "\(refused.stderr)")
        // Setting the server up with the old release's schema, which lacks the rename, is refused.
        let older = try tandem(["backend", "setup", url, "--schema", try dir.schemaFile(Self.v1, name: "v1.json")])
        #expect(older.status == 1 && older.stderr.contains("the server was set up with migration 'notes-to-memos', which this schema does not list"), "\(older.stderr)")
        #expect(try psql.execute("SELECT to_regclass('notes') IS NULL").first?.first == "t", "no second notes table")
        // Setup again changes nothing.
        #expect(try tandem(["backend", "setup", url, "--schema", try dir.schemaFile(Self.v2, name: "v2.json")]).status == 0)
        #expect(try psql.execute("SELECT count(*) FROM memos").first?.first == "3")
    }
}

/// The embedded backend's server keeps the table names rows were uploaded with: a host that
/// renamed a table applies the changes a host of the old release uploads under the old name to
/// the renamed table, through a full download too.
@Suite struct RenamedTableDownloadTests {
    @Test func changesUnderAnOldTableNameReachTheRenamedTable() throws {
        let dir = try TemporaryDirectory()
        let server = "sqlite:" + dir.path("server.db")
        let (a, b) = (dir.path("a.db"), dir.path("b.db"))
        for path in [a, b] { try SharedDatabase(path: path, schema: TableRenameTests.v1).close() }
        try SharedDatabase(path: b, schema: TableRenameTests.v2).close()
        do {
            let db = try SharedDatabase(path: a, schema: TableRenameTests.v1)
            try db.execute("INSERT INTO notes(id, title, n) VALUES ('r1', ?, ?)", ["{\"x\":1}", Int64.min])
            db.close()
        }
        try RollingDrops.sync([a, b], url: server)
        let expected: [[DatabaseValue]] = [[.text("r1"), .text("{\"x\":1}"), .integer(.min)]]
        #expect(try TableRenameTests().rows(b, schema: TableRenameTests.v2, table: "memos") == expected)
        #expect(try tandem(["backend", "reset", b]).status == 0)
        try RollingDrops.sync([b], url: server)
        #expect(try TableRenameTests().rows(b, schema: TableRenameTests.v2, table: "memos") == expected, "a full download too")
    }
}

/// Table renames on the server run once each, in order, whatever setups run when: a chain in one
/// setup, a table renamed back, setup run again, a new table that takes an old name, a column
/// renamed before its table, and a new name taken by another table (refused, nothing changed).
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct TableRenameOrderTests {
    static func table(_ name: String, _ columns: [ColumnSchema] = [.text("title")]) -> TableSchema { TableSchema(name: name, columns: columns) }
    static func rename(_ id: String, _ from: String, _ to: String) -> Migration { Migration(id, uploads: .none, steps: [.renameTable(from: from, to: to)]) }

    func counts(_ psql: PostgresConnection) throws -> String {
        let tables = try psql.execute("SELECT string_agg(table_name, ',' ORDER BY table_name) FROM tandem_tables").first?.first ?? nil
        var text = "registered=\(tables ?? "")"
        for name in ["notes", "memos", "items"] {
            if try psql.execute("SELECT to_regclass($1) IS NOT NULL", [name]).first?.first == "t" {
                text += " \(name)=" + (try psql.execute("SELECT count(*) FROM \(name)").first?.first.flatMap { $0 } ?? "?")
            }
        }
        return text
    }

    @Test func renamesRunOnceEachInOrder() throws {
        let v1 = Schema(tables: [Self.table("notes")])
        let url = try TestPostgres.database(schema: v1)
        let psql = try PostgresConnection(url)
        try psql.execute("INSERT INTO notes(id, title) VALUES ('r1', 'one'), ('r2', 'two')")
        let toMemos = Self.rename("to-memos", "notes", "memos"), toItems = Self.rename("to-items", "memos", "items")
        // A chain in one setup, then again.
        let v3 = Schema(tables: [Self.table("items")], migrations: [toMemos, toItems])
        for _ in 0..<2 {
            try PostgresBackend.setup(conninfo: url, schema: v3)
            #expect(try counts(psql) == "registered=items items=2")
        }
        // Renamed back, then a setup again.
        let back = Schema(tables: [Self.table("notes")], migrations: [toMemos, toItems, Self.rename("back", "items", "notes")])
        for _ in 0..<2 {
            try PostgresBackend.setup(conninfo: url, schema: back)
            #expect(try counts(psql) == "registered=notes notes=2")
        }
        // An old name taken by another table: the taken name is refused, changing nothing.
        try psql.execute("CREATE TABLE memos(id text PRIMARY KEY, title text)")
        let again = Schema(tables: [Self.table("memos")], migrations: back.migrations + [Self.rename("memos-again", "notes", "memos")])
        #expect(throws: PostgresError.self) { try PostgresBackend.setup(conninfo: url, schema: again) }
        let after = try counts(psql)
        #expect(after == "registered=notes notes=2 memos=0", "\(after)")
    }

    @Test func aNewTableThatTakesAnOldNameIsNotRenamed() throws {
        let v1 = Schema(tables: [Self.table("notes")])
        let url = try TestPostgres.database(schema: v1)
        let psql = try PostgresConnection(url)
        try psql.execute("INSERT INTO notes(id, title) VALUES ('r1', 'one')")
        let toMemos = Self.rename("to-memos", "notes", "memos")
        try PostgresBackend.setup(conninfo: url, schema: Schema(tables: [Self.table("memos")], migrations: [toMemos]))
        let dropMemos = Migration("drop-memos", uploads: .none, steps: [.dropTable(table: "memos", discardRows: true)])
        let v3 = Schema(tables: [Self.table("notes")], migrations: [toMemos, dropMemos])
        try PostgresBackend.setup(conninfo: url, schema: v3, contract: true)
        try psql.execute("INSERT INTO notes(id, title) VALUES ('n1', 'a new table')")
        try PostgresBackend.setup(conninfo: url, schema: v3)
        #expect(try counts(psql) == "registered=notes notes=1")
    }

    /// A name taken after its table was renamed away names the new table in the steps before:
    /// a column renamed in `drafts` before `drafts` took `notes`'s name is renamed in that table.
    @Test func aNameTakenAfterItsTableWasRenamedAwayNamesTheNewTable() throws {
        let v1 = Schema(tables: [Self.table("notes"), Self.table("drafts", [.text("body")])])
        let url = try TestPostgres.database(schema: v1)
        let psql = try PostgresConnection(url)
        try psql.execute("INSERT INTO drafts(id, body) VALUES ('d1', 'draft body')")
        try psql.execute("INSERT INTO notes(id, title) VALUES ('n1', 'a note')")
        let migrations = [
            Migration("m0", uploads: .none, steps: [.renameColumn(table: "drafts", from: "body", to: "text")]), Self.rename("m1", "notes", "archive"),
            Self.rename("m2", "drafts", "notes"),
        ]
        let v2 = Schema(tables: [Self.table("archive"), Self.table("notes", [.text("text")])], migrations: migrations)
        try PostgresBackend.setup(conninfo: url, schema: v2)
        #expect(try psql.execute("SELECT text FROM notes WHERE id = 'd1'").first?.first == "draft body")
        #expect(try psql.execute("SELECT title FROM archive WHERE id = 'n1'").first?.first == "a note")
        #expect(try PostgresSetup.existingColumns(of: "archive", on: psql).keys.sorted() == ["id", "title"])
    }

    @Test func aColumnRenamedBeforeItsTableIsServedUnderItsNameNow() throws {
        let v1 = Schema(tables: [Self.table("notes", [.text("title"), .integer("n")])])
        let url = try TestPostgres.database(schema: v1)
        let psql = try PostgresConnection(url)
        try psql.execute("INSERT INTO notes(id, title, n) VALUES ('r1', 'one', 1)")
        let change = Migration(
            "change", uploads: .none,
            steps: [.renameColumn(table: "notes", from: "title", to: "heading"), .changeType(table: "notes", column: "n", to: .real), .renameTable(from: "notes", to: "memos")])
        let v2 = Schema(tables: [Self.table("memos", [.text("heading"), .real("n")])], migrations: [change])
        try PostgresBackend.setup(conninfo: url, schema: v2)
        #expect(try psql.execute("SELECT heading, title, n FROM memos").first == ["one", "one", "1"])
        #expect(try PostgresSetup.existingColumns(of: "memos", on: psql)["n"] == "double precision")
        try PostgresBackend.setup(conninfo: url, schema: v2, contract: true)
        #expect(try PostgresSetup.existingColumns(of: "memos", on: psql).keys.sorted() == ["heading", "id", "n"])
    }
}
