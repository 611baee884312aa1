import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// Tandem's own tables are written by Tandem only: the user's SQL, on every path and in every
/// spelling, is refused in the user's terms and changes nothing, while Tandem's own writes (the
/// views' triggers, sync, repair) go on; what other writers did is reported by `tandem check`,
/// and `tandem init` restores deleted bookkeeping.
@Suite struct InternalTablesTests {
    let dir: TemporaryDirectory
    init() throws { dir = try TemporaryDirectory() }

    /// Tandem's own objects in a file, by name.
    static let internalNames = ["ps_kv", "ps_crud", "ps_state", "ps_untyped", "ps_download", "ps_data__", "ps_view_", "ps_index__"]

    /// Statements that write, alter or drop one of Tandem's tables or objects, in many spellings.
    static var forbiddenStatements: [String] {
        let columns = ["ps_kv": "value", "ps_crud": "data", "ps_state": "value", "ps_untyped": "data", "ps_download": "data", "ps_data__notes": "data"]
        var statements: [String] = []
        for (table, column) in columns.sorted(by: { $0.key < $1.key }) {
            for name in [table, table.uppercased(), "\"\(table)\"", "main.\(table)", "[\(table)]", "`\(table)`"] {
                statements.append("DELETE FROM \(name)")
            }
            statements += [
                "UPDATE \(table) SET \(column) = \(column)",
                "INSERT INTO \(table) SELECT * FROM \(table) WHERE 0",
                "INSERT OR REPLACE INTO \(table) SELECT * FROM \(table)",
                "REPLACE INTO \(table) SELECT * FROM \(table) LIMIT 1",
                "WITH x AS (SELECT 1) DELETE FROM \(table) WHERE EXISTS (SELECT * FROM x)",
                "DELETE FROM \(table) RETURNING *",
                "SAVEPOINT s; DELETE FROM \(table); RELEASE s",
                "DROP TABLE \(table)",
                "ALTER TABLE \(table) ADD COLUMN extra",
                "ALTER TABLE \(table) RENAME TO renamed",
                "CREATE INDEX mine ON \(table)(\(column))",
                "CREATE TRIGGER mine AFTER INSERT ON \(table) BEGIN SELECT 1; END",
                "CREATE TEMP TRIGGER mine AFTER INSERT ON \(table) BEGIN SELECT 1; END",
                "CREATE TABLE mine(a); CREATE TRIGGER mine_writes AFTER INSERT ON mine BEGIN DELETE FROM \(table); END; INSERT INTO mine VALUES (1)",
            ]
        }
        return statements + [
            "DROP VIEW notes", "DROP TRIGGER ps_view_insert__notes", "DROP INDEX ps_index__notes__by_title",
            "CREATE TABLE ps_mine(a)", "CREATE VIEW ps_mine AS SELECT 1", "PRAGMA writable_schema = ON",
            // Tandem's own statement, word for word: the user's SQL is never served Tandem's prepared statement.
            "INSERT OR REPLACE INTO ps_kv(key, value) VALUES ('client_id', '')",
        ]
    }

    /// Everything a refused statement could have changed: the schema and every row of Tandem's tables.
    func snapshot(_ db: SharedDatabase) throws -> [String] {
        try db.read { tx in
            var lines = try tx.fetchAll("SELECT type, name, sql FROM sqlite_master ORDER BY name").map { "\($0.values)" }
            for table in ["ps_kv", "ps_crud", "ps_state", "ps_untyped", "ps_download", "ps_data__notes"] {
                lines += try tx.fetchAll("SELECT * FROM \(table)").map { "\(table): \($0.values)" }
            }
            return lines
        }
    }

    @Test func theUsersSQLCannotWriteTandemsTables() throws {
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'kept')")
        try db.write { try $0.store(.syncStatus, "{}") }  // Tandem's own statement, prepared and cached
        let before = try snapshot(db)
        let paths: [(String, (String) throws -> Void)] = [
            ("execute", { sql in try db.write { try $0.execute(sql) } }),
            ("run", { sql in _ = try db.write { try $0.run(sql) } }),
            ("fetchAll", { sql in _ = try db.write { try $0.fetchAll(sql) } }),
            ("scalar", { sql in _ = try db.write { try $0.scalar(sql) } }),
            ("SharedDatabase.execute", { sql in try db.execute(sql) }),
        ]
        var accepted: [String] = [], refused = 0
        for sql in Self.forbiddenStatements {
            for (path, run) in paths {
                // fetchAll and scalar take one statement.
                if (path == "fetchAll" || path == "scalar") && sql.contains(";") { continue }
                do {
                    try run(sql)
                    accepted.append("\(path): \(sql)")
                } catch TandemError.invalidSQL(_, let reason) {
                    refused += 1
                    let leaked = Self.internalNames.filter { reason.contains($0) && !sql.contains($0) }
                    #expect(leaked.isEmpty, "\(sql): the reason names \(leaked): \(reason)")
                } catch {
                    Issue.record("\(path): \(sql): \(error)")
                }
            }
        }
        #expect(accepted.isEmpty, "accepted: \(accepted.prefix(5))")
        #expect(refused > 400, "\(refused) refusals")
        #expect(try snapshot(db) == before, "a refused statement changed the file")
        // Tandem's own writes go on: the views' triggers, the bulk path, an upload queue read.
        try db.execute("INSERT INTO notes(id, title) VALUES ('b', 'after')")
        try db.write { tx in _ = try tx.insert(into: "notes", columns: ["id", "title"], rows: [[.text("c"), .text("bulk")]]) }
        #expect(try db.uploadQueue.pendingCount() == 3)
        #expect(try db.fetchAll("SELECT count(*) FROM ps_crud")[0][0] == .integer(3), "reading Tandem's tables is allowed")
    }

    /// `tandem exec` refuses with a message in the user's terms and leaves the file as it was.
    @Test func execRefusesAndChangesNothing() throws {
        let path = dir.path("a.db")
        let db = try SharedDatabase(path: path, schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'kept')")
        let before = try snapshot(db)
        for (sql, words) in [
            ("DELETE FROM ps_kv", "Tandem's own settings"), ("DELETE FROM ps_crud", "Tandem's upload queue is written by Tandem only"),
            ("DELETE FROM ps_kv WHERE key = 'client_id'", "Tandem's own settings"),
            ("UPDATE ps_data__notes SET data = '{}'", "write them through the view notes"),
            ("DROP TABLE ps_data__notes", "the stored rows of table notes belong to Tandem"),
            ("CREATE TRIGGER wipe AFTER INSERT ON ps_crud BEGIN DELETE FROM ps_crud; END", "Tandem's upload queue belongs to Tandem"),
        ] {
            let result = try tandem(["exec", path, sql])
            #expect(result.status == 1 && result.stderr.contains(words), "\(sql): \(result.stderr)")
        }
        #expect(try snapshot(db) == before)
    }

    /// A trigger another program put on the upload queue (one that empties it on every insert)
    /// cannot run from Tandem's connections: writes fail naming it, and `tandem check` lists it.
    @Test func aForeignTriggerOnTheQueueCannotEmptyIt() throws {
        let path = dir.path("a.db")
        let db = try SharedDatabase(path: path, schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'queued')")
        try sqlite(path, "CREATE TRIGGER wipe AFTER INSERT ON ps_crud BEGIN DELETE FROM ps_crud; END")
        let viaView = try tandem(["exec", path, "INSERT INTO notes(id, title) VALUES ('b', 'next')"])
        #expect(viaView.status == 1 && viaView.stderr.contains("the trigger wipe, which Tandem did not make, writes Tandem's upload queue"), "\(viaView.stderr)")
        #expect(throws: TandemError.self) {
            try db.write { tx in _ = try tx.insert(into: "notes", columns: ["id"], rows: [[.text("c")]]) }
        }
        #expect(try db.uploadQueue.pendingCount() == 1, "the queue is kept")
        let check = try tandem(["check", path])
        #expect(check.status == 1 && check.stdout.contains("the trigger wipe on Tandem's upload queue, which Tandem did not make"), "\(check.stdout)")
    }

    /// What other writers did to Tandem's bookkeeping is reported, and a sync never uploads under
    /// an empty client id.
    @Test func checkReportsWhatOtherWritersDid() throws {
        let path = dir.path("a.db")
        let db = try SharedDatabase(path: path, schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'queued')")
        #expect(try tandem(["check", path]).stdout == "ok")
        try sqlite(
            path,
            """
            UPDATE ps_kv SET value = '' WHERE key = 'client_id'; DELETE FROM ps_kv WHERE key = 'epoch';
            CREATE TABLE ps_mine(a); CREATE TABLE other(a);
            CREATE TRIGGER sneaky AFTER INSERT ON other BEGIN DELETE FROM ps_state; END;
            INSERT INTO ps_crud(id, tx_id, data) VALUES (100, 1, 'not json'), (101, 1, '{"op":"PUT","type":"notes"}'),
                (102, 'x', '{"op":"DELETE","type":"notes","id":"a"}'), (103, 1, '{"op":"MOVE","type":"notes","id":"a"}');
            """)
        let check = try tandem(["check", path])
        #expect(check.status == 1)
        for problem in [
            "Tandem's client id is empty", "Tandem's owner epoch is missing",
            "the table ps_mine, which Tandem did not make, has a name reserved for Tandem",
            "the trigger sneaky on other, which Tandem did not make, may write Tandem's tables",
            "Tandem's upload queue holds entries it cannot upload (ids 100, 101, 102, 103)",
        ] {
            #expect(check.stdout.contains(problem), "\(problem): \(check.stdout)")
        }
        let sync = try tandem(["sync", path, "--backend", "sqlite:" + dir.path("server.db")])
        #expect(sync.status == 1 && sync.stderr.contains("client id is missing or empty"), "\(sync.stderr)")
        #expect(try EmbeddedBackend(path: dir.path("server.db")).rows().isEmpty, "nothing was uploaded")
    }

    /// Tandem's settings deleted by another program (every command then says the file has no
    /// Tandem schema): `tandem init` with the schema file restores them, says so, and keeps the
    /// rows and the queued uploads, which a sync then delivers.
    @Test func initRestoresDeletedSettings() throws {
        let path = dir.path("a.db")
        let schemaFile = try dir.schemaFile()
        #expect(try tandem(["init", path, "--schema", schemaFile]).status == 0)
        #expect(try tandem(["exec", path, "INSERT INTO notes(id, title, done) VALUES ('a', 'kept', 1)"]).status == 0)
        try sqlite(path, "DELETE FROM ps_kv")
        #expect(try tandem(["query", path, "SELECT * FROM notes"]).stderr.contains("has no Tandem schema"))
        let check = try tandem(["check", path])
        #expect(check.status == 1 && check.stdout.contains("no Tandem schema is stored in it (store one with tandem init DB --schema FILE)"), "\(check.stdout)")

        let repaired = try tandem(["init", path, "--schema", schemaFile])
        #expect(repaired.status == 0, "\(repaired.stderr)")
        for line in [
            "repaired: no Tandem schema was stored in it; stored the one given",
            "repaired: Tandem's client id was missing; made a new one",
            "repaired: Tandem's owner epoch was missing or not an integer; set it to 0",
            "repaired: Tandem's record of its views' version was missing; regenerated the views and triggers",
        ] {
            #expect(repaired.stdout.contains(line), "\(line): \(repaired.stdout)")
        }
        #expect(try tandem(["check", path]).stdout == "ok")
        let db = try SharedDatabase(path: path)
        #expect(try db.fetchAll("SELECT id, title, done FROM notes").map(\.values) == [[.text("a"), .text("kept"), .integer(1)]])
        #expect(try db.uploadQueue.pendingCount() == 1)
        #expect(try !db.clientID().isEmpty)
        #expect(try tandem(["sync", path, "--backend", "sqlite:" + dir.path("server.db")]).status == 0)
        #expect(try db.uploadQueue.pendingCount() == 0)
        #expect(try EmbeddedBackend(path: dir.path("server.db")).rows().map(\.id) == ["a"])
    }
}
