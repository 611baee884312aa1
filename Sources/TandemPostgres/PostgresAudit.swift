import Foundation
import Tandem

/// What `tandem backend check URL` reports: each of Tandem's server objects (its tables, the
/// synced tables, its sequence and functions) with its owner and who else may use it, and what a
/// tenant could reach that ``PostgresPrivileges`` does not allow.
///
/// Related documentation: https://www.postgresql.org/docs/15/ddl-priv.html,
/// https://www.postgresql.org/docs/15/sql-createfunction.html ("Writing SECURITY DEFINER
/// Functions Safely")
public struct PostgresAudit: Sendable, Hashable {
    /// One server object.
    public struct Object: Sendable, Hashable {
        /// `table`, `sequence` or `function`.
        public var kind: String
        /// Its name (a function's with its argument types).
        public var name: String
        public var owner: String
        /// Each role other than the owner that holds privileges on it, with them (`PUBLIC` for
        /// every role), as `role: PRIVILEGE, …`.
        public var privileges: [String]
        /// For a function: whether it runs as its owner (`SECURITY DEFINER`); for a table: whether
        /// row-level security is on.
        public var guarded: Bool
    }

    /// Every object, tables first, by name.
    public var objects: [Object] = []
    /// What a tenant, or any role, could reach that it should not, in words; empty when none.
    public var problems: [String] = []
    /// What the administrator chose that widens a role's reach (a role that may write the global
    /// tables), in words.
    public var notes: [String] = []

    /// Reads the objects of the database `conninfo` names and checks them (see the type).
    /// - Throws: ``PostgresError`` when the server cannot be reached or is not set up.
    public static func check(conninfo: String) throws -> PostgresAudit {
        let db = try PostgresConnection(conninfo)
        guard try PostgresBackend.serverID(on: db) != nil else {
            throw PostgresError("\(db.safeName) is not set up as a Tandem backend; run \(Remedy.setUpServer.apiTerms) with the schema first", remedy: .setUpServer)
        }
        var audit = PostgresAudit()
        let tables = try db.execute(
            """
            SELECT CASE c.relkind WHEN 'S' THEN 'sequence' ELSE 'table' END, c.relname::text, pg_get_userbyid(c.relowner)::text,
                   c.relrowsecurity, \(privileges(acl: "c.relacl, acldefault(CASE c.relkind WHEN 'S' THEN 's' ELSE 'r' END::\"char\", c.relowner)", owner: "c.relowner")),
                   coalesce(t.scoped, false), t.table_name IS NOT NULL
            FROM pg_class c LEFT JOIN tandem_tables t ON t.table_name = c.relname
            WHERE c.relnamespace = (SELECT n.oid FROM pg_namespace n WHERE n.nspname = current_schema())
              AND c.relkind IN ('r', 'p', 'S') AND (c.relname LIKE 'tandem\\_%' OR t.table_name IS NOT NULL)
            ORDER BY 1 DESC, 2
            """)
        let functions = try db.execute(
            """
            SELECT 'function', p.oid::regprocedure::text, pg_get_userbyid(p.proowner)::text, p.prosecdef,
                   \(privileges(acl: "p.proacl, acldefault('f', p.proowner)", owner: "p.proowner")),
                   EXISTS (SELECT 1 FROM unnest(p.proconfig) s WHERE s LIKE 'search\\_path=%pg\\_temp')
            FROM pg_proc p
            WHERE p.pronamespace = (SELECT n.oid FROM pg_namespace n WHERE n.nspname = current_schema()) AND p.proname LIKE 'tandem\\_%'
            ORDER BY 2
            """)
        let clients = Set(try db.execute("SELECT role::text FROM tandem_grant_versions").compactMap { $0[0] ?? nil })
        for row in tables + functions {
            let object = Object(
                kind: row[0] ?? "", name: row[1] ?? "", owner: row[2] ?? "", privileges: try JSONDecoder().decode([String].self, from: Data((row[4] ?? "[]").utf8)),
                guarded: row[3] == "t")
            audit.objects.append(object)
            if object.privileges.contains(where: { $0.hasPrefix("PUBLIC:") }) {
                audit.problems.append("PUBLIC (every role) may use the \(object.kind) \(object.name): REVOKE ALL ON \(object.kind.uppercased()) \(object.name) FROM PUBLIC")
            }
            if object.kind == "function" && object.guarded && row[5] != "t" {
                audit.problems.append(
                    "the function \(object.name) runs as \(object.owner) without a pinned search path (its schema, then pg_temp): run \(Remedy.setUpServer.apiTerms) again")
            }
            if object.kind == "table" && row[5] == "t" && !object.guarded {
                audit.problems.append("the scoped table \(object.name) has row-level security off: every role sees every row; run \(Remedy.setUpServer.apiTerms) again")
            }
            if object.kind == "table" && row[6] == "t" && row[5] != "t" {
                let writers = object.privileges.filter { entry in
                    ["INSERT", "UPDATE", "DELETE", "TRUNCATE"].contains { entry.contains($0) }
                }.compactMap { $0.split(separator: ":").first.map(String.init) }.filter { clients.contains($0) }
                for role in writers { audit.notes.append("the role \(role) may write the global table \(object.name), which every role shares") }
            }
        }
        for row in try db.execute(
            """
            SELECT r.who FROM (SELECT 'PUBLIC' AS who UNION ALL SELECT role::text FROM tandem_grant_versions) r
            WHERE CASE WHEN r.who = 'PUBLIC'
                       THEN EXISTS (SELECT 1 FROM pg_namespace n, aclexplode(n.nspacl) a WHERE n.nspname = current_schema() AND a.grantee = 0 AND a.privilege_type = 'CREATE')
                       ELSE EXISTS (SELECT 1 FROM pg_roles x WHERE x.rolname = r.who) AND has_schema_privilege(r.who, current_schema(), 'CREATE') END
            """)
        {
            audit.problems.append(
                "\(row[0] ?? "") may create objects in Tandem's schema, where they could stand in for Tandem's: REVOKE CREATE ON SCHEMA \(SQLText.identifier(try db.execute("SELECT current_schema()").first?.first.flatMap { $0 } ?? "public")) FROM \(row[0] == "PUBLIC" ? "PUBLIC" : SQLText.identifier(row[0] ?? ""))"
            )
        }
        return audit
    }

    /// The expression of an object's privileges held by roles other than its `owner`, as a JSON
    /// array of `role: PRIVILEGE, …` (`PUBLIC` for every role); `acl` is its ACL, or the default.
    private static func privileges(acl: String, owner: String) -> String {
        """
        coalesce((SELECT json_agg(g.who || ': ' || g.what ORDER BY g.who) FROM (
            SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee)::text END AS who,
                   string_agg(a.privilege_type, ', ' ORDER BY a.privilege_type) AS what
            FROM aclexplode(coalesce(\(acl))) a WHERE a.grantee <> \(owner) GROUP BY 1) g)::text, '[]')
        """
    }
}
