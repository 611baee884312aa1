import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres
@testable import TandemCLI

/// Uploads into a table no scope concerns are logged per statement, from the statement's
/// transition tables, each row as the table holds it when the statement ends
/// (`PostgresTriggers.installUploadLog`); other tables keep the row trigger.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct PostgresUploadLogTests {
    /// Another client's incremental download (through the log, not a full sync) ends with the
    /// server's rows when a trigger of the server's own changes an uploaded row again inside the
    /// upload's statement and writes another row: with the row trigger, the statement's row was
    /// logged after the trigger's change, as it was before it, and clients kept the older value.
    @Test func aRowAnotherTriggerChangedInsideTheUploadIsLoggedAsItEnded() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let admin = try PostgresConnection(url)
        // Named to fire before Tandem's row trigger (triggers fire in name order).
        try admin.execute(
            """
            CREATE FUNCTION stamp() RETURNS trigger LANGUAGE plpgsql AS $f$
            BEGIN
                IF NEW.id NOT LIKE 'audit-%' THEN
                    UPDATE notes SET title = NEW.title || '!' WHERE id = NEW.id AND title NOT LIKE '%!';
                    INSERT INTO notes(id, title) VALUES ('audit-' || NEW.id, TG_OP) ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title;
                END IF;
                RETURN NULL;
            END
            $f$
            """)
        try admin.execute("CREATE TRIGGER stamp AFTER INSERT OR UPDATE ON notes FOR EACH ROW EXECUTE FUNCTION stamp()")
        let dir = try TemporaryDirectory()
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        for db in [a, b] { try sync(db, url) }  // B's next download reads the log
        try a.execute("INSERT INTO notes(id, title, done) VALUES ('n1', 'one', 1), ('n2', 'two', 2), ('n3', 'three', 3)")
        try a.execute("UPDATE notes SET title = 'uno' WHERE id = 'n1'")
        try a.execute("DELETE FROM notes WHERE id = 'n2'")
        try sync(a, url)
        try sync(b, url)
        let server = try admin.execute("SELECT id, title, done::text FROM notes ORDER BY id").map { $0.map { $0 ?? "NULL" } }
        let onB = try b.fetchAll("SELECT id, title, done FROM notes ORDER BY id").map { row in row.values.map { $0.stringValue ?? $0.int64Value.map(String.init) ?? "NULL" } }
        #expect(server.contains(["n1", "uno!", "1"]) && server.contains(["audit-n1", "UPDATE", "NULL"]), "\(server)")
        #expect(onB == server, "B downloads what the server holds")
    }

    /// Only a table that has no scope, and through which no table is scoped, has the upload log;
    /// setting the schema up again keeps it so, and takes it away when a table becomes scoped.
    @Test func onlyTablesNoScopeConcernsLogUploadsPerStatement() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let admin = try PostgresConnection(url)
        func statementTriggers(_ table: String) throws -> [String] {
            try admin.execute(
                "SELECT tgname FROM pg_trigger WHERE tgrelid = $1::regclass AND tgname LIKE 'tandem_upload_%' ORDER BY tgname", [table]
            ).compactMap { $0[0] ?? nil }
        }
        #expect(try statementTriggers("notes") == ["tandem_upload_delete_notes", "tandem_upload_insert_notes", "tandem_upload_update_notes"])
        let scoped = Schema(tables: [
            TableSchema(name: "notes", columns: [.text("title"), .integer("done"), .real("score"), .text("tenant")], scope: .column("tenant"))
        ])
        try PostgresBackend.setup(conninfo: url, schema: scoped)
        #expect(try statementTriggers("notes").isEmpty)
        #expect(try admin.execute("SELECT count(*) FROM pg_proc WHERE proname LIKE 'tandem_upload_%_notes'").first?.first == "0")
    }

    /// A partitioned table keeps the row trigger inside uploads too: PostgreSQL copies row
    /// triggers to partitions but not statement triggers, so a write straight into a partition
    /// (by another trigger, inside an upload) would be logged by neither.
    @Test func aPartitionedTableKeepsTheRowTrigger() throws {
        let url = try TestPostgres.emptyDatabase()
        let admin = try PostgresConnection(url)
        try admin.execute("CREATE TABLE notes(id text PRIMARY KEY, title text, done bigint, score double precision) PARTITION BY HASH (id)")
        try admin.execute("CREATE TABLE notes_p0 PARTITION OF notes FOR VALUES WITH (MODULUS 2, REMAINDER 0)")
        try admin.execute("CREATE TABLE notes_p1 PARTITION OF notes FOR VALUES WITH (MODULUS 2, REMAINDER 1)")
        try PostgresBackend.setup(conninfo: url, schema: notesSchema)
        #expect(try admin.execute("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'tandem_upload_%'").first?.first == "0")
        let dir = try TemporaryDirectory()
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        for db in [a, b] { try sync(db, url) }
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one'), ('n2', 'two')")
        try a.execute("DELETE FROM notes WHERE id = 'n2'")
        try sync(a, url)
        try sync(b, url)
        #expect(try b.fetchAll("SELECT id, title FROM notes ORDER BY id").map { $0.values.map { $0.stringValue ?? "" } } == [["n1", "one"]])
    }

    private func sync(_ db: SharedDatabase, _ url: String) throws {
        let result = try runTandem(["sync", db.path, "--backend", url])
        #expect(result.status == 0, "\(result.stderr)")
    }
}
