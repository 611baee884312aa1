import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// A tenant's login role, and a role never granted anything, call every Tandem function with
/// hostile arguments and touch every Tandem table and object: each call is refused or changes
/// nothing outside the role's own rows, as the administrator sees the server after them all.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct TenantHostileCallTests {
    typealias Fleet = ScopedSyncTests.Fleet

    /// Everything on the server outside `role`'s own rows of the positions and markers, as text.
    private func state(_ admin: PostgresConnection, outside role: String) throws -> [String] {
        let own: [String: String] = ["tandem_clients": "role", "tandem_uploads": "role", "tandem_grant_versions": "role"]
        return try [
            "folders", "notes", "settings", "tandem_changes", "tandem_meta", "tandem_tables", "tandem_columns", "tandem_grants",
            "tandem_grant_versions", "tandem_uploads", "tandem_clients",
        ].map { table in
            let filter = own[table].map { " WHERE \($0) <> \(SQLText.literal(role))" } ?? ""
            let rows = try admin.execute("SELECT coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '') FROM \(table) t\(filter)")
            return "\(table): \(rows.first?.first.flatMap { $0 } ?? "")"
        } + [
            try admin.execute(
                "SELECT string_agg(tgname::text || tgenabled::text, ',' ORDER BY tgname) FROM pg_trigger WHERE NOT tgisinternal"
            ).first?.first.flatMap { $0 } ?? "",
            try admin.execute(
                "SELECT string_agg(polname::text || polrelid::regclass::text || coalesce(pg_get_expr(polqual, polrelid), ''), ',' ORDER BY 1) FROM pg_policy"
            ).first?.first.flatMap { $0 } ?? "",
            try admin.execute(
                "SELECT string_agg(relname::text || relrowsecurity::text, ',' ORDER BY relname) FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace"
            ).first?.first.flatMap { $0 } ?? "",
            try admin.execute("SELECT string_agg(md5(prosrc) || proname::text, ',' ORDER BY proname) FROM pg_proc WHERE proname LIKE 'tandem\\_%'").first?.first.flatMap { $0 }
                ?? "",
        ]
    }

    /// The hostile calls: Tandem's functions with other scopes' ids, global rows, NULLs and the
    /// names of internal tables, writes to every Tandem table, its sequence and its objects, and
    /// temporary tables named as Tandem's (which a role's own search path puts first).
    private func hostileCalls(otherRole: String, otherClient: String) -> [String] {
        let other = SQLText.literal(otherRole), client = SQLText.literal(otherClient)
        return [
            "SELECT tandem_log_missing('folders', 'fa')", "SELECT tandem_log_missing('notes', 'na')",
            "SELECT tandem_log_missing('settings', 's')", "SELECT tandem_log_missing('tandem_changes', '1')",
            "SELECT tandem_log_missing('tandem_meta', 'history')", "SELECT tandem_log_missing('pg_authid', 'x')",
            "SELECT tandem_log_missing('folders; DROP TABLE folders', 'x')", "SELECT tandem_log_missing(NULL, NULL)",
            "SELECT tandem_log_missing('folders', NULL)", "SELECT tandem_log_missing('Folders', 'fa')",
            "SELECT tandem_new_history()", "SELECT tandem_upload_begin(\(client), 999999)", "SELECT tandem_upload_begin(NULL, NULL)",
            "SELECT tandem_refuse('00000', 'x')", "SELECT tandem_scopes()", "SELECT tandem_real(1e308)",
            "SELECT tandem_log_folders()", "SELECT tandem_log_truncate()", "SELECT tandem_row_folders(f) FROM folders f",
            "INSERT INTO tandem_changes(op, type, id, scope) VALUES ('DELETE', 'notes', 'na', 'A')",
            "INSERT INTO tandem_changes(op, type, id) VALUES ('TRUNCATE', 'settings', '')",
            "UPDATE tandem_changes SET data = '{}'", "DELETE FROM tandem_changes", "TRUNCATE tandem_changes",
            "UPDATE tandem_meta SET value = 'x'", "DELETE FROM tandem_meta", "INSERT INTO tandem_meta(key, value) VALUES ('retention_seconds', '1')",
            "INSERT INTO tandem_tables(table_name) VALUES ('x')", "UPDATE tandem_tables SET scoped = false", "DELETE FROM tandem_columns",
            "INSERT INTO tandem_grants(role, scope) VALUES (current_user, 'A')", "UPDATE tandem_grants SET scope = 'A'",
            "DELETE FROM tandem_grants", "INSERT INTO tandem_grant_versions(role, version) VALUES (\(other), 0)",
            "UPDATE tandem_grant_versions SET version = 0", "DELETE FROM tandem_grant_versions",
            "INSERT INTO tandem_uploads(role, client_id, tx_id, digest) VALUES (\(other), \(client), 99, 'x')",
            "UPDATE tandem_uploads SET digest = 'x'", "DELETE FROM tandem_uploads",
            "INSERT INTO tandem_clients(role, client_id, epoch) VALUES (\(other), \(client), 1)",
            "UPDATE tandem_clients SET epoch = 0, cursor_xmin = NULL", "DELETE FROM tandem_clients",
            "SELECT nextval('tandem_changes_version_seq')", "SELECT setval('tandem_changes_version_seq', 1)",
            "ALTER TABLE folders DISABLE ROW LEVEL SECURITY", "DROP POLICY tandem_scope ON folders",
            "CREATE POLICY everything ON folders USING (true)", "ALTER TABLE folders DISABLE TRIGGER USER",
            "CREATE OR REPLACE FUNCTION tandem_scopes() RETURNS text[] LANGUAGE sql AS $$ SELECT ARRAY['A'] $$",
            "UPDATE folders SET tenant = 'B' WHERE id = 'fa'", "DELETE FROM notes WHERE id = 'na'",
            "INSERT INTO notes(id, title, folder_id) VALUES ('x', 'y', 'fa')", "UPDATE notes SET folder_id = 'fa' WHERE id = 'nb'",
            "INSERT INTO folders(id, name, tenant) VALUES ('fx', 'x', 'A')", "UPDATE settings SET value = 'x'", "DELETE FROM settings",
            "TRUNCATE folders, notes, settings",
            // Temporary tables named as Tandem's: first on the role's own search path, never on the functions'.
            "CREATE TEMP TABLE tandem_grants(role name, scope text)", "INSERT INTO tandem_grants VALUES (current_user, 'A')",
            "CREATE TEMP TABLE tandem_meta(key text, value text)", "INSERT INTO tandem_meta VALUES ('history', '1/x')",
            "CREATE TEMP TABLE tandem_tables(table_name text, scoped boolean)", "INSERT INTO tandem_tables VALUES ('tandem_changes', false)",
            "CREATE TEMP TABLE tandem_changes(version bigint, xid xid8, op text, type text, id text, data text, scope text)",
            "SELECT tandem_new_history()", "SELECT tandem_log_missing('tandem_changes', '1')", "SELECT tandem_log_missing('folders', 'fa')",
            "UPDATE folders SET name = 'taken' WHERE id = 'fa'", "DELETE FROM notes WHERE id = 'na'",
        ]
    }

    @Test func everyCallIsRefusedOrChangesNothingOutsideTheRolesOwnRows() throws {
        let fleet = try Fleet()
        let admin = try PostgresConnection(fleet.admin)
        try admin.execute("CREATE ROLE \(fleet.prefix)_nobody LOGIN")
        try admin.execute("INSERT INTO folders(id, name, tenant) VALUES ('fa', 'A folder', 'A'), ('fb', 'B folder', 'B')")
        try admin.execute("INSERT INTO notes(id, title, folder_id) VALUES ('na', 'A note', 'fa'), ('nb', 'B note', 'fb')")
        try admin.execute("INSERT INTO settings(id, value) VALUES ('s', 'global')")
        let a1 = try fleet.client("a1")
        try fleet.sync("a1")
        try a1.execute("UPDATE notes SET title = 'A edit' WHERE id = 'na'")
        try fleet.sync("a1")
        _ = try fleet.client("b1")
        try fleet.sync("b1")
        let aRole = "\(fleet.prefix)_a1", aClient = try a1.clientID()

        for role in ["b1", "nobody"] {
            let login = "\(fleet.prefix)_\(role)"
            let before = try state(admin, outside: login)
            let hostile = try PostgresConnection(fleet.url(role))
            var refused = 0
            for call in hostileCalls(otherRole: aRole, otherClient: aClient) {
                do { _ = try hostile.execute(call) } catch is PostgresError { refused += 1 }
                // What the role reads through Tandem's tables is its own, its scopes' and the global.
                if role == "b1" {
                    #expect(try hostile.execute("SELECT count(*) FROM folders WHERE tenant <> 'B'").first?.first == "0", "after \(call)")
                    #expect(try hostile.execute("SELECT count(*) FROM notes WHERE id = 'na'").first?.first == "0", "after \(call)")
                }
            }
            let after = try state(admin, outside: login)
            for (was, now) in zip(before, after) { #expect(was == now, "as \(role): \(was) became \(now)") }
            #expect(refused > 40, "as \(role): \(refused) calls refused")
            if role == "b1" {
                for table in [
                    "tandem_changes WHERE scope = 'A' OR (scope LIKE 'role:%' AND scope <> 'role:' || current_user)",
                    "tandem_clients WHERE role <> current_user", "tandem_uploads WHERE role <> current_user",
                    "tandem_grants WHERE role <> current_user", "tandem_grant_versions WHERE role <> current_user",
                ] {
                    #expect(try hostile.execute("SELECT count(*) FROM \(table)").first?.first == "0", "\(table)")
                }
            }
        }
        // The role never granted anything may call none of Tandem's functions.
        let nobody = try PostgresConnection(fleet.url("nobody"))
        for function in try admin.execute(PostgresPrivileges.functionsQuery).compactMap({ $0[0] ?? nil }) {
            #expect(
                try nobody.execute("SELECT has_function_privilege(current_user, $1, 'EXECUTE')", [function]).first?.first == "f",
                "\(function) is callable by a role never granted anything")
        }
        // Clients still converge afterwards.
        try fleet.sync("a1")
        try fleet.sync("b1")
        let titles = try a1.fetchAll("SELECT title FROM notes").compactMap { $0[0].stringValue }
        let rejected = try a1.uploadQueue.rejected().map(\.error)
        #expect(titles == ["A edit"], "\(titles) \(rejected)")
    }

    /// No Tandem object grants anything to PUBLIC, and every function that runs as the
    /// administrator, or that row-level security runs, has its search path pinned with
    /// `pg_temp` last.
    @Test func noObjectGrantsPublicAndEveryDefinerPinsItsSearchPath() throws {
        let fleet = try Fleet()
        let admin = try PostgresConnection(fleet.admin)
        let publicFunctions = try admin.execute(
            """
            SELECT p.proname FROM pg_proc p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
            WHERE p.proname LIKE 'tandem\\_%' AND a.grantee = 0
            """)
        #expect(publicFunctions.isEmpty, "\(publicFunctions)")
        let publicTables = try admin.execute(
            """
            SELECT c.relname FROM pg_class c, aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a
            WHERE (c.relname LIKE 'tandem\\_%' OR c.relname IN ('folders', 'notes', 'settings')) AND a.grantee = 0
            """)
        #expect(publicTables.isEmpty, "\(publicTables)")
        let unpinned = try admin.execute(
            """
            SELECT p.proname FROM pg_proc p
            WHERE p.proname LIKE 'tandem\\_%' AND (p.prosecdef OR p.proname IN ('tandem_scopes', 'tandem_upload_begin'))
              AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%' AND c LIKE '%pg\\_temp')
            """)
        #expect(unpinned.isEmpty, "\(unpinned)")
    }
}
