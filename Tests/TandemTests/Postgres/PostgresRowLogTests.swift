import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres
@testable import TandemCLI

/// Every change is logged with the row as the table holds it when Tandem's trigger runs
/// (`PostgresTriggers.install`), so that another client ends with the server's rows when a
/// trigger of the server's own changes, removes, moves or restores a row again inside the
/// statement that wrote it, whichever of the two triggers runs first, for every writer (another
/// application's SQL, a client's upload) and every kind of table (with a scope or without).
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct PostgresRowLogTests {
    static let schema = Schema(tables: [
        TableSchema(name: "notes", columns: [.text("title"), .text("tenant")]),
        TableSchema(name: "tasks", columns: [.text("title"), .text("tenant")], scope: .column("tenant")),
    ])

    enum Writer: String, CaseIterable { case anotherApplication, upload }

    /// The server's trigger, by the title a row has: `stamp…` gets a `!` appended, `gone…` is
    /// deleted, `move…` gets the id `moved-<id>`, `swap…` moves to tenant `B`, and a deleted
    /// `keep…` row is put back. Named `a_user` it runs before Tandem's row trigger, `z_user` after.
    @Test(arguments: ["a_user", "z_user"], Writer.allCases)
    func aRowChangedAgainInsideItsStatementReachesClientsAsItEnded(trigger: String, writer: Writer) throws {
        let url = try TestPostgres.database(schema: Self.schema)
        let admin = try PostgresConnection(url)
        for table in ["notes", "tasks"] {
            let function = "\(trigger)_\(table)"
            try admin.execute(
                """
                CREATE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS $f$
                BEGIN
                    IF TG_OP = 'DELETE' THEN
                        IF OLD.title LIKE 'keep%' THEN
                            INSERT INTO \(table)(id, title, tenant) VALUES (OLD.id, OLD.title || ' (kept)', OLD.tenant);
                        END IF;
                        RETURN NULL;
                    END IF;
                    IF NEW.title LIKE 'stamp%' AND NEW.title NOT LIKE '%!' THEN
                        UPDATE \(table) SET title = title || '!' WHERE id = NEW.id;
                    ELSIF NEW.title LIKE 'gone%' THEN
                        DELETE FROM \(table) WHERE id = NEW.id;
                    ELSIF NEW.title LIKE 'move%' AND NEW.id NOT LIKE 'moved-%' THEN
                        UPDATE \(table) SET id = 'moved-' || id WHERE id = NEW.id;
                    ELSIF NEW.title LIKE 'swap%' AND NEW.tenant IS DISTINCT FROM 'B' THEN
                        UPDATE \(table) SET tenant = 'B' WHERE id = NEW.id;
                    END IF;
                    RETURN NULL;
                END
                $f$
                """)
            try admin.execute("CREATE TRIGGER \(trigger) AFTER INSERT OR UPDATE OR DELETE ON \(table) FOR EACH ROW EXECUTE FUNCTION \(function)()")
        }
        let dir = try TemporaryDirectory()
        let a = try SharedDatabase(path: dir.path("a.db"), schema: Self.schema)
        let b = try SharedDatabase(path: dir.path("b.db"), schema: Self.schema)
        for table in ["notes", "tasks"] {
            let rows = ["stamp", "gone", "move", "swap", "keep", "plain"].map { "('\($0)-\(table)', '\($0)', 'A')" }.joined(separator: ", ")
            try admin.execute("INSERT INTO \(table)(id, title, tenant) VALUES \(rows)")
        }
        for db in [a, b] { try sync(db, url) }  // B's next download reads the log
        let statements = ["notes", "tasks"].flatMap { table in
            [
                "INSERT INTO \(table)(id, title, tenant) VALUES ('i1', 'stamp new', 'A'), ('i2', 'gone new', 'A'), ('i3', 'move new', 'A'), ('i4', 'swap new', 'A')",
                "UPDATE \(table) SET title = 'stamp again' WHERE id = 'plain-\(table)'",
                "UPDATE \(table) SET title = 'gone later' WHERE id = 'stamp-\(table)'",
                "UPDATE \(table) SET title = 'swap later' WHERE id = 'keep-\(table)'",
                "DELETE FROM \(table) WHERE id IN ('swap-\(table)', 'move-\(table)')",
                "INSERT INTO \(table)(id, title, tenant) VALUES ('i5', 'keep new', 'A')",
                "DELETE FROM \(table) WHERE id = 'i5'",
            ]
        }
        switch writer {
        case .anotherApplication:
            for statement in statements { try admin.execute(statement) }
        case .upload:
            for statement in statements { try a.execute(statement) }
            try sync(a, url)
        }
        try sync(b, url)
        try sync(a, url)
        for table in ["notes", "tasks"] {
            let server = try admin.execute("SELECT id, title, tenant FROM \(table) ORDER BY id").map { $0.map { $0 ?? "NULL" } }
            let onB = try b.fetchAll("SELECT id, title, tenant FROM \(table) ORDER BY id").map { $0.values.map { $0.stringValue ?? "NULL" } }
            #expect(server.contains(["i1", "stamp new!", "A"]) && server.contains(["moved-i3", "move new", "A"]), "\(table): \(server)")
            #expect(onB == server, "\(table): B downloads what the server holds")
            let onA = try a.fetchAll("SELECT id, title, tenant FROM \(table) ORDER BY id").map { $0.values.map { $0.stringValue ?? "NULL" } }
            #expect(onA == server, "\(table): A, which wrote (or uploaded) the rows, ends with what the server holds")
        }
    }

    private func sync(_ db: SharedDatabase, _ url: String) throws {
        let result = try runTandem(["sync", db.path, "--backend", url])
        #expect(result.status == 0, "\(result.stderr)")
    }
}
