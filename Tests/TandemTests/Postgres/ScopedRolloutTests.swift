import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// Schema changes rolled out to a fleet of tenants keep the tenant boundary: after a setup that
/// renames a scoped child table and drops a column of its scoped parent, each tenant's hosts
/// still converge on their own slice, and a tenant's role still reads and writes nothing of
/// another's on the server.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct ScopedRolloutTests {
    static let change = Migration(
        "memos", uploads: .none,
        steps: [.renameTable(from: "notes", to: "memos"), .dropColumn(table: "folders", column: "name", discardValues: true)])
    static let v2 = Schema(
        tables: [
            TableSchema(name: "folders", columns: [.text("tenant")], scope: .column("tenant")),
            TableSchema(name: "memos", columns: [.text("title"), .text("folder_id")], scope: .parent(table: "folders", via: "")),
            TableSchema(name: "settings", columns: [.text("value")]),
        ], migrations: [change])

    @Test func aRolloutKeepsEachTenantToItsSlice() throws {
        let fleet = try ScopedSyncTests.Fleet()
        do {
            let a1 = try fleet.client("a1"), b1 = try fleet.client("b1")
            try a1.execute("INSERT INTO folders(id, name, tenant) VALUES ('fa', 'A folder', 'A')")
            try a1.execute("INSERT INTO notes(id, title, folder_id) VALUES ('na', 'A note', 'fa')")
            try b1.execute("INSERT INTO folders(id, name, tenant) VALUES ('fb', 'B folder', 'B')")
            try b1.execute("INSERT INTO notes(id, title, folder_id) VALUES ('nb', 'B note', 'fb')")
            a1.close()
            b1.close()
            try fleet.client("a2").close()
            try fleet.client("b2").close()
        }
        for role in ["a1", "b1", "a2", "b2"] { try fleet.sync(role) }

        // The window: every host migrates, setup with the new schema.
        for role in ["a1", "a2", "b1", "b2"] { try SharedDatabase(path: fleet.dir.path("\(role).db"), schema: Self.v2).close() }
        try PostgresBackend.setup(conninfo: fleet.admin, schema: Self.v2)
        do {
            let a2 = try SharedDatabase(path: fleet.dir.path("a2.db"), schema: Self.v2)
            try a2.execute("INSERT INTO memos(id, title, folder_id) VALUES ('na-2', 'A memo after the rename', 'fa')")
            a2.close()
            let b2 = try SharedDatabase(path: fleet.dir.path("b2.db"), schema: Self.v2)
            try b2.execute("INSERT INTO memos(id, title, folder_id) VALUES ('nb-2', 'B memo after the rename', 'fb')")
            b2.close()
        }
        for role in ["a2", "b2", "a1", "b1"] { try fleet.sync(role) }
        for (role, expected) in [("a1", ["na", "na-2"]), ("a2", ["na", "na-2"]), ("b1", ["nb", "nb-2"]), ("b2", ["nb", "nb-2"])] {
            let db = try SharedDatabase(path: fleet.dir.path("\(role).db"), schema: Self.v2)
            #expect(try db.fetchAll("SELECT id FROM memos ORDER BY id").compactMap { $0[0].stringValue } == expected, "\(role)")
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM ps_data__folders WHERE json_type(data, '$.name') IS NOT NULL").int64Value } == 0)
            db.close()
        }

        // On the server, as a tenant's role: only its slice of the renamed table, no write outside it.
        let b1 = try PostgresConnection(fleet.url("b1"))
        #expect(try b1.execute("SELECT string_agg(id, ',' ORDER BY id) FROM memos").first?.first == "nb,nb-2")
        #expect(try b1.execute("UPDATE memos SET title = 'taken' WHERE id = 'na' RETURNING id").isEmpty)
        #expect(throws: PostgresError.self) { try b1.execute("INSERT INTO memos(id, title, folder_id) VALUES ('x', 'into A', 'fa')") }
        #expect(try PostgresConnection(fleet.admin).execute("SELECT title FROM memos WHERE id = 'na'").first?.first == "A note")
    }
}
