import Foundation
import Tandem

/// Who may use each of Tandem's server objects: least privilege, with row-level security for
/// what a role may use at all (see ``PostgresScopes``).
///
/// - PUBLIC may use nothing of Tandem's: PostgreSQL grants EXECUTE on a new function to PUBLIC,
///   so setup takes it back from every `tandem_*` function (it grants nothing on tables).
/// - A client role (given scopes by ``PostgresScopes/grant(_:to:writeGlobal:on:)``) may run every
///   `tandem_*` function; read `tandem_changes` (its scopes' changes, global ones and its own),
///   `tandem_meta`, `tandem_tables` and `tandem_columns`, and its own rows of `tandem_grants` and
///   `tandem_grant_versions`; read and write its own rows of `tandem_uploads` and
///   `tandem_clients`; read and write the rows of its scopes in scoped tables; and read global
///   tables, which it writes only when granted writing (`--write-global`).
/// - Functions that run as the administrator (`SECURITY DEFINER`: the change log's triggers,
///   `tandem_log_missing`, `tandem_new_history`) check what they are asked, and every function
///   that names a table runs with the search path setup pinned (Tandem's schema, then
///   `pg_temp`).
///
/// Related documentation: https://www.postgresql.org/docs/15/sql-createfunction.html
/// ("Writing SECURITY DEFINER Functions Safely"), https://www.postgresql.org/docs/15/ddl-priv.html
enum PostgresPrivileges {
    /// Tandem's functions in the current schema, as `regprocedure` text (name and argument types).
    static let functionsQuery = """
        SELECT p.oid::regprocedure::text FROM pg_proc p
        WHERE p.pronamespace = (SELECT n.oid FROM pg_namespace n WHERE n.nspname = current_schema()) AND p.proname LIKE 'tandem\\_%'
        ORDER BY 1
        """

    /// Takes EXECUTE on Tandem's functions from PUBLIC, and gives every role granted scopes
    /// before what a client needs of the tables and functions setup may have added (their
    /// writing of global tables stays as it was).
    static func install(on connection: PostgresConnection) throws {
        let functions = try connection.execute(functionsQuery).compactMap { $0[0] ?? nil }
        if !functions.isEmpty { try connection.execute("REVOKE ALL ON FUNCTION \(functions.joined(separator: ", ")) FROM PUBLIC") }
        let roles = try connection.execute(
            "SELECT v.role FROM tandem_grant_versions v JOIN pg_roles r ON r.rolname = v.role ORDER BY 1"
        ).compactMap { $0[0] ?? nil }
        for role in roles { try grantClient(role, writeGlobal: nil, on: connection) }
    }

    /// Gives `role` what a client needs (see the type). `writeGlobal`: true grants INSERT, UPDATE
    /// and DELETE on the global tables, false takes them back, nil leaves them as they are.
    static func grantClient(_ role: String, writeGlobal: Bool?, on connection: PostgresConnection) throws {
        let quoted = SQLText.identifier(role)
        for row in try connection.execute("SELECT table_name, scoped FROM tandem_tables ORDER BY table_name") {
            guard let name = row[0] else { continue }
            let table = SQLText.identifier(name)
            if row[1] == "t" {
                try connection.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON \(table) TO \(quoted)")
                continue
            }
            try connection.execute("GRANT SELECT ON \(table) TO \(quoted)")
            switch writeGlobal {
            case true?: try connection.execute("GRANT INSERT, UPDATE, DELETE ON \(table) TO \(quoted)")
            case false?: try connection.execute("REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON \(table) FROM \(quoted)")
            case nil: break
            }
        }
        try connection.execute("GRANT SELECT ON tandem_changes, tandem_meta, tandem_tables, tandem_columns, tandem_grants, tandem_grant_versions TO \(quoted)")
        try connection.execute("GRANT SELECT, INSERT, UPDATE ON tandem_uploads, tandem_clients TO \(quoted)")
        let functions = try connection.execute(functionsQuery).compactMap { $0[0] ?? nil }
        if !functions.isEmpty { try connection.execute("GRANT EXECUTE ON FUNCTION \(functions.joined(separator: ", ")) TO \(quoted)") }
    }
}
