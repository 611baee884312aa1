import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// Scoped sync: two tenants with hosts of their own, each host logged in as its own role, converge
/// on their own slices through one PostgreSQL; the server keeps each role to its slice whatever it
/// runs.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct ScopedSyncTests {
    static let schema = Schema(tables: [
        TableSchema(name: "folders", columns: [.text("name"), .text("tenant")], scope: .column("tenant")),
        TableSchema(name: "notes", columns: [.text("title"), .text("folder_id")], scope: .parent(table: "folders", via: "")),
        TableSchema(name: "settings", columns: [.text("value")]),
    ])

    /// A server with roles `<prefix>_a1`, `<prefix>_a2` (tenant A) and `<prefix>_b1`, `<prefix>_b2`
    /// (tenant B); `a1` may write the global tables, which the others only read.
    struct Fleet {
        let admin: String
        let prefix = "r" + UUID().uuidString.prefix(8).lowercased()
        let dir: TemporaryDirectory

        init() throws {
            admin = try TestPostgres.database(schema: ScopedSyncTests.schema)
            dir = try TemporaryDirectory()
            let psql = try PostgresConnection(admin)
            for role in ["a1", "a2", "b1", "b2"] { try psql.execute("CREATE ROLE \(prefix)_\(role) LOGIN") }
            for role in ["a1", "a2"] { try PostgresBackend.grant(conninfo: admin, role: "\(prefix)_\(role)", scopes: ["A"], writeGlobal: role == "a1") }
            for role in ["b1", "b2"] { try PostgresBackend.grant(conninfo: admin, role: "\(prefix)_\(role)", scopes: ["B"]) }
        }

        func url(_ role: String) -> String { admin.replacingOccurrences(of: "://tandem@", with: "://\(prefix)_\(role)@") }

        func client(_ role: String) throws -> SharedDatabase {
            try SharedDatabase(path: dir.path("\(role).db"), schema: ScopedSyncTests.schema)
        }

        @discardableResult
        func sync(_ role: String, expect status: Int32 = 0) throws -> String {
            let result = try runTandem(["sync", dir.path("\(role).db"), "--backend", url(role)])
            #expect(result.status == status, "sync \(role): \(result.stderr)")
            return result.stderr
        }
    }

    private func ids(_ db: SharedDatabase, _ table: String) throws -> Set<String> {
        Set(try db.fetchAll("SELECT id FROM \(table)").compactMap { $0[0].stringValue })
    }

    @Test func tenantsConvergeOnTheirOwnSlices() throws {
        let fleet = try Fleet()
        let a1 = try fleet.client("a1"), a2 = try fleet.client("a2"), b1 = try fleet.client("b1"), b2 = try fleet.client("b2")
        try a1.execute("INSERT INTO folders(id, name, tenant) VALUES ('fa', 'A folder', 'A')")
        try a1.execute("INSERT INTO notes(id, title, folder_id) VALUES ('na', 'A note', 'fa')")
        try a1.execute("INSERT INTO settings(id, value) VALUES ('s', 'global')")
        try b1.execute("INSERT INTO folders(id, name, tenant) VALUES ('fb', 'B folder', 'B')")
        try b1.execute("INSERT INTO notes(id, title, folder_id) VALUES ('nb', 'B note', 'fb')")
        try b2.execute("INSERT INTO notes(id, title, folder_id) VALUES ('nb-2', 'from the second B host', 'fb')")
        for role in ["a1", "b1", "a2", "b2", "a1", "b1"] { try fleet.sync(role) }
        for db in [a1, a2] {
            #expect(try ids(db, "folders") == ["fa"] && ids(db, "notes") == ["na"] && ids(db, "settings") == ["s"], "\(db.path)")
        }
        for db in [b1, b2] {
            #expect(try ids(db, "folders") == ["fb"] && ids(db, "notes") == ["nb", "nb-2"] && ids(db, "settings") == ["s"], "\(db.path)")
        }

        // An upload outside the slice is refused by the server and set aside; the rest goes on.
        try b1.execute("INSERT INTO folders(id, name, tenant) VALUES ('sneaky', 'into A', 'A')")
        try b1.execute("INSERT INTO notes(id, title, folder_id) VALUES ('nb2', 'second B note', 'fb')")
        try b1.execute("INSERT INTO notes(id, title, folder_id) VALUES ('na-from-b', 'under A''s folder', 'fa')")
        let refused = try fleet.sync("b1", expect: 1)
        #expect(refused.contains("set aside"), "\(refused)")
        #expect(try b1.uploadQueue.rejected().flatMap { $0.transaction.entries.map(\.rowID) }.sorted() == ["na-from-b", "sneaky"])
        try fleet.sync("a1")
        #expect(try ids(a1, "folders") == ["fa"] && ids(a1, "notes") == ["na"])

        // A row moving to another scope leaves the old slice (with its children) and joins the new one.
        try PostgresConnection(fleet.admin).execute("UPDATE folders SET tenant = 'B' WHERE id = 'fa'")
        for role in ["a1", "a2", "b1"] { try fleet.sync(role) }
        for db in [a1, a2] { #expect(try ids(db, "folders").isEmpty && ids(db, "notes").isEmpty, "\(db.path)") }
        // (B's refused rows left B at the full sync after their refusal; they wait, set aside, until retried or discarded.)
        #expect(try ids(b1, "folders") == ["fa", "fb"] && ids(b1, "notes") == ["na", "nb", "nb-2", "nb2"])
        try fleet.sync("b2")
        #expect(try ids(b2, "folders") == ["fa", "fb"] && ids(b2, "notes") == ["na", "nb", "nb-2", "nb2"])

        // Grants change: the client converges on its new slice at its next sync, pending uploads kept.
        try PostgresConnection(fleet.admin).execute("UPDATE folders SET tenant = 'A' WHERE id = 'fa'")
        try fleet.sync("a1")
        #expect(try ids(a1, "notes") == ["na"])
        try b1.uploadQueue.discardRejected()  // the next sync brings back the server's rows
        try fleet.sync("b1")
        #expect(try ids(b1, "folders") == ["fb"] && ids(b1, "notes") == ["nb", "nb-2", "nb2"])
        try b1.execute("UPDATE notes SET title = 'pending through the change' WHERE id = 'nb'")
        try PostgresBackend.grant(conninfo: fleet.admin, role: "\(fleet.prefix)_b1", scopes: ["A"])
        try fleet.sync("b1")
        #expect(try b1.sync.status().lastFullSync?.reason.contains("scopes changed") == true)
        #expect(try ids(b1, "folders") == ["fa", "fb"] && ids(b1, "notes") == ["na", "nb", "nb-2", "nb2"])
        #expect(try PostgresConnection(fleet.admin).execute("SELECT title FROM notes WHERE id = 'nb'").first?.first == "pending through the change")
        try PostgresBackend.revoke(conninfo: fleet.admin, role: "\(fleet.prefix)_b1", scopes: ["A"])
        try fleet.sync("b1")
        #expect(try ids(b1, "folders") == ["fb"] && ids(b1, "notes") == ["nb", "nb-2", "nb2"])
    }

    /// A grant or a revocation wakes a waiting client of the role at once (its cursor's grants
    /// are then out of date: a full sync of its new slice follows), though it changes no row.
    @Test func grantsWakeTheRolesWaitingClients() throws {
        let fleet = try Fleet()
        let backend = try PostgresBackend(conninfo: fleet.url("b1"))
        let cursor = try settledCursor(backend)
        #expect(try backend.waitForChanges(after: cursor, timeout: .zero) == nil)
        try PostgresBackend.grant(conninfo: fleet.admin, role: "\(fleet.prefix)_b1", scopes: ["A"])
        #expect(try backend.waitForChanges(after: cursor, timeout: .seconds(5)) != nil, "the grant wakes the wait")
        #expect(try backend.fetchChanges(after: cursor, limit: 100).fullSyncReason?.contains("scopes changed") == true)
        let after = try settledCursor(backend)
        #expect(try backend.waitForChanges(after: after, timeout: .zero) == nil)
        try PostgresBackend.revoke(conninfo: fleet.admin, role: "\(fleet.prefix)_b1", scopes: ["A"])
        #expect(try backend.waitForChanges(after: after, timeout: .seconds(5)) != nil, "the revocation wakes the wait")
    }

    /// With host B's credentials, nothing of tenant A's can be read, counted, changed, deleted or
    /// forged, from `psql` or by editing the local database.
    @Test func oneTenantsCredentialsCannotReachAnothersRows() throws {
        let fleet = try Fleet()
        let a1 = try fleet.client("a1"), b1 = try fleet.client("b1")
        try a1.execute("INSERT INTO folders(id, name, tenant) VALUES ('fa', 'A folder', 'A')")
        try a1.execute("INSERT INTO notes(id, title, folder_id) VALUES ('na', 'A note', 'fa')")
        try fleet.sync("a1")
        try fleet.sync("b1")
        let aClient = try a1.clientID()
        let b = try PostgresConnection(fleet.url("b1"))
        #expect(try b.execute("SELECT count(*) FROM folders").first?.first == "0")
        #expect(try b.execute("SELECT count(*) FROM notes WHERE folder_id = 'fa'").first?.first == "0")
        #expect(try b.execute("UPDATE notes SET title = 'taken' WHERE id = 'na' RETURNING 1").isEmpty)
        #expect(try b.execute("DELETE FROM folders WHERE id = 'fa' RETURNING 1").isEmpty)
        #expect(throws: PostgresError.self) { try b.execute("INSERT INTO notes(id, title, folder_id) VALUES ('x', 'y', 'fa')") }
        #expect(throws: PostgresError.self) { try b.execute("INSERT INTO folders(id, name, tenant) VALUES ('x', 'y', 'A')") }
        #expect(try b.execute("SELECT count(*) FROM tandem_changes WHERE scope = 'A' OR id IN ('fa', 'na')").first?.first == "0")
        #expect(throws: PostgresError.self) { try b.execute("INSERT INTO tandem_changes(op, type, id, scope) VALUES ('DELETE', 'notes', 'na', 'A')") }
        #expect(throws: PostgresError.self) { try b.execute("DELETE FROM tandem_changes") }
        #expect(try b.execute("SELECT count(*) FROM tandem_uploads").first?.first == "0")
        #expect(throws: PostgresError.self) {
            try b.execute("INSERT INTO tandem_uploads(role, client_id, tx_id, digest) VALUES ('\(fleet.prefix)_a1', $1, 99, 'x')", [aClient])
        }
        #expect(try b.execute("UPDATE tandem_clients SET epoch = 999 WHERE client_id = $1 RETURNING 1", [aClient]).isEmpty)
        #expect(throws: PostgresError.self) { try b.execute("INSERT INTO tandem_grants(role, scope) VALUES (current_user, 'A')") }
        // A deletion B logs for a row it patched is B's alone: A's hosts keep the row.
        try b.execute("SELECT tandem_log_missing('notes', 'na')")
        try fleet.sync("a1")
        #expect(try ids(a1, "notes") == ["na"])
        // Editing the local database widens nothing: a full sync from scratch still brings B's slice only.
        try b1.write { try $0.removeStored(.cursor) }
        try fleet.sync("b1")
        #expect(try ids(b1, "folders").isEmpty && ids(b1, "notes").isEmpty)
        #expect(try PostgresConnection(fleet.admin).execute("SELECT count(*) FROM notes").first?.first == "1", "the administrator sees every row")
        // A role never granted anything is told what to do.
        try PostgresConnection(fleet.admin).execute("CREATE ROLE \(fleet.prefix)_c1 LOGIN")
        _ = try SharedDatabase(path: fleet.dir.path("c1.db"), schema: ScopedSyncTests.schema)
        #expect(try fleet.sync("c1", expect: 1).contains("tandem backend grant"))
    }
}
