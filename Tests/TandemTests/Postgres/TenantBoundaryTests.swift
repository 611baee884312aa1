import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// The boundary a tenant's login role meets on the server: nothing of Tandem's reaches past its
/// slice, whatever it calls with whatever arguments, and none of its pending edits vanish.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct TenantBoundaryTests {
    typealias Fleet = ScopedSyncTests.Fleet

    private func ids(_ db: SharedDatabase, _ table: String) throws -> Set<String> {
        Set(try db.fetchAll("SELECT id FROM \(table)").compactMap { $0[0].stringValue })
    }

    private func count(_ connection: PostgresConnection, _ sql: String) throws -> Int {
        Int(try connection.execute(sql).first?.first.flatMap { $0 } ?? "") ?? -1
    }

    /// A role with no privileges at all, or a tenant that may only read a global table, cannot
    /// make clients drop a row the server keeps through the missing-row function.
    @Test func noRoleCanMakeClientsDropARowTheServerKeeps() throws {
        let fleet = try Fleet()
        let admin = try PostgresConnection(fleet.admin)
        try admin.execute("INSERT INTO settings(id, value) VALUES ('t2', 'green')")
        try admin.execute("INSERT INTO folders(id, name, tenant) VALUES ('fa', 'A folder', 'A')")
        try admin.execute("CREATE ROLE \(fleet.prefix)_nobody LOGIN")
        let b1 = try fleet.client("b1"), a1 = try fleet.client("a1")
        try fleet.sync("b1")
        try fleet.sync("a1")
        #expect(try ids(b1, "settings") == ["t2"] && ids(a1, "folders") == ["fa"])
        let logged = try count(admin, "SELECT count(*) FROM tandem_changes")

        let nobody = try PostgresConnection(fleet.url("nobody"))
        #expect(throws: PostgresError.self, "a role never granted anything may not call it") {
            try nobody.execute("SELECT tandem_log_missing('settings', 't2')")
        }
        let b = try PostgresConnection(fleet.url("b1"))
        #expect(throws: PostgresError.self, "a global table is read-only to a tenant") {
            try b.execute("SELECT tandem_log_missing('settings', 't2')")
        }
        // A tenant that may write: a row that is there (its own or another tenant's) is not logged as gone.
        let writer = try PostgresConnection(fleet.url("a1"))
        #expect(try writer.execute("SELECT tandem_log_missing('settings', 't2')").first?.first == "f")
        #expect(try b.execute("SELECT tandem_log_missing('folders', 'fa')").first?.first == "f")
        #expect(try count(admin, "SELECT count(*) FROM tandem_changes") == logged, "nothing logged")

        try fleet.sync("b1")
        try fleet.sync("a1")
        #expect(try ids(b1, "settings") == ["t2"], "B keeps the row the server keeps")
        #expect(try ids(a1, "folders") == ["fa"], "A keeps its folder")
    }

    /// After a revocation, a pending edit of a row outside the new slice is refused and set
    /// aside, never counted as uploaded while the server stays unchanged.
    @Test func anEditOutsideARevokedScopeIsSetAsideNotLost() throws {
        let fleet = try Fleet()
        let admin = try PostgresConnection(fleet.admin)
        try PostgresBackend.grant(conninfo: fleet.admin, role: "\(fleet.prefix)_a1", scopes: ["A", "C"], writeGlobal: true)
        try admin.execute("INSERT INTO folders(id, name, tenant) VALUES ('fa', 'A folder', 'A'), ('fc', 'C folder', 'C')")
        try admin.execute("INSERT INTO notes(id, title, folder_id) VALUES ('an5', 'an A note', 'fa'), ('cn1', 'a C note', 'fc')")
        let a1 = try fleet.client("a1")
        try fleet.sync("a1")
        #expect(try ids(a1, "notes") == ["an5", "cn1"])
        try a1.execute("UPDATE notes SET title = 'edit' WHERE id = 'an5'")
        try a1.execute("DELETE FROM notes WHERE id = 'cn1'")
        try PostgresBackend.revoke(conninfo: fleet.admin, role: "\(fleet.prefix)_a1", scopes: ["A", "C"])
        try fleet.sync("a1", expect: 1)
        let rejected = try a1.uploadQueue.rejected()
        #expect(rejected.flatMap { $0.transaction.entries.map(\.rowID) }.sorted() == ["an5", "cn1"], "both edits set aside")
        #expect(rejected.allSatisfy { $0.error.contains("not among those this login role may change") }, "\(rejected.map(\.error))")
        #expect(try a1.sync.status().pendingUploads == 0)
        #expect(try admin.execute("SELECT title FROM notes WHERE id = 'an5'").first?.first == "an A note", "the server unchanged")
        #expect(try count(admin, "SELECT count(*) FROM notes WHERE id = 'cn1'") == 1, "the server keeps the row")
        #expect(try count(admin, "SELECT count(*) FROM tandem_changes WHERE op = 'DELETE'") == 0, "no deletion logged")
        // Granted again, the retried edits arrive.
        try PostgresBackend.grant(conninfo: fleet.admin, role: "\(fleet.prefix)_a1", scopes: ["A", "C"])
        #expect(try a1.uploadQueue.retryRejected() == 2)
        try fleet.sync("a1")
        #expect(try admin.execute("SELECT title FROM notes WHERE id = 'an5'").first?.first == "edit")
        #expect(try count(admin, "SELECT count(*) FROM notes WHERE id = 'cn1'") == 0)
    }

    /// Global tables are read-only to a tenant unless it was granted writing: its uploads that
    /// write one are refused and set aside, and `psql` with its credentials changes nothing.
    @Test func globalTablesAreReadOnlyToTenantsUnlessGrantedWriting() throws {
        let fleet = try Fleet()
        let admin = try PostgresConnection(fleet.admin)
        try admin.execute("INSERT INTO settings(id, value) VALUES ('currency', 'EUR')")
        let b1 = try fleet.client("b1")
        try fleet.sync("b1")
        let b = try PostgresConnection(fleet.url("b1"))
        for statement in [
            "DELETE FROM settings WHERE id = 'currency'", "UPDATE settings SET value = 'XXX'", "INSERT INTO settings(id, value) VALUES ('x', 'y')",
            "TRUNCATE settings",
        ] {
            #expect(throws: PostgresError.self, "\(statement)") { try b.execute(statement) }
        }
        try b1.execute("UPDATE settings SET value = 'USD' WHERE id = 'currency'")
        let refused = try fleet.sync("b1", expect: 1)
        #expect(refused.contains("set aside") && refused.contains("settings"), "\(refused)")
        #expect(try admin.execute("SELECT value FROM settings").first?.first == "EUR")

        try PostgresBackend.grant(conninfo: fleet.admin, role: "\(fleet.prefix)_b1", scopes: ["B"], writeGlobal: true)
        #expect(try b1.uploadQueue.retryRejected() == 1)
        try fleet.sync("b1")
        #expect(try admin.execute("SELECT value FROM settings").first?.first == "USD")
        // Each grant sets it anew: granted again without it, the table is read-only again.
        try PostgresBackend.grant(conninfo: fleet.admin, role: "\(fleet.prefix)_b1", scopes: ["B"])
        #expect(throws: PostgresError.self) { try b.execute("UPDATE settings SET value = 'XXX'") }
    }

    /// After a refusal the host shows the server's state for the refused rows (the download
    /// after it is a full sync), the refused change waits in the set-aside list, and status names
    /// the last refusal (transaction, rows, the server's reason) until it is discarded.
    @Test func aRefusalIsNamedInStatusAndTheHostShowsTheServersState() throws {
        let fleet = try Fleet()
        try PostgresConnection(fleet.admin).execute("INSERT INTO folders(id, name, tenant) VALUES ('fb', 'B folder', 'B')")
        let b1 = try fleet.client("b1")
        try fleet.sync("b1")
        try b1.execute("INSERT INTO folders(id, name, tenant) VALUES ('sneaky', 'into A', 'A')")
        try b1.execute("UPDATE folders SET tenant = 'A', name = 'given away' WHERE id = 'fb'")
        let before = try runTandem(["status", b1.path, "--json"])
        #expect(before.stdout.contains("\"last_refusal\":null"), "\(before.stdout)")
        try fleet.sync("b1", expect: 1)
        let status = try runTandem(["status", b1.path, "--json"])
        let json = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let refusal = json?["last_refusal"] as? [String: Any]
        let rows = refusal?["rows"] as? [[String: String]]
        #expect(rows == [["table": "folders", "id": "fb"]], "\(status.stdout)")
        #expect((refusal?["error"] as? String)?.contains("row-level security") == true, "\(status.stdout)")
        #expect(refusal?["transaction_id"] as? Int != nil && refusal?["at"] as? String != nil, "\(status.stdout)")
        #expect(json?["rejected_uploads"] as? Int == 2)
        let text = try runTandem(["status", b1.path])
        #expect(text.stdout.contains("last refusal:") && text.stdout.contains("folders fb"), "\(text.stdout)")
        #expect(try ids(b1, "folders") == ["fb"], "the server's rows, and only them")
        #expect(try b1.fetchAll("SELECT name, tenant FROM folders").first.map { [$0[0].stringValue, $0[1].stringValue] } == ["B folder", "B"])
        #expect(try b1.uploadQueue.rejected().flatMap { $0.transaction.entries.map(\.rowID) } == ["sneaky", "fb"], "the refused changes kept")
        try b1.uploadQueue.discardRejected()
        try fleet.sync("b1")
        #expect(try runTandem(["status", b1.path, "--json"]).stdout.contains("\"last_refusal\":null"))
    }
}
