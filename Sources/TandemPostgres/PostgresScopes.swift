import Foundation
import Tandem

/// Scoped sync: which rows a login role may see and write, enforced by PostgreSQL's row-level
/// security, whatever the role runs (Tandem or `psql`). See DESIGN.md, "Scoped sync".
///
/// - `tandem_grants(role, scope)` holds the scope values each role may use (`tandem backend
///   grant`); `tandem_scopes()` gives the current role's, as the policies read them (in a
///   subquery, so that it runs once per statement, not once per row). Each change
///   of a role's grants moves `tandem_grant_versions`, which its clients' cursors carry, so a
///   client whose scopes changed does a full sync of its new slice (pending uploads kept).
/// - A scoped table's policy: its scope column's value is one of the role's scopes, or (a table
///   scoped through its parent) its parent row is one the role sees. Inserts and updates are
///   checked alike, so an upload outside the slice is refused (set aside by the client).
/// - The change log records each change's scope (`''` for a row of a scoped table with no scope
///   value, seen by no role; NULL for a global table's); its policy shows a role the changes of
///   its scopes, global ones, and its own (`role:<name>`: a PATCH of a row that is not there).
///   Only triggers write it (their functions run as the administrator who ran setup).
/// - Upload markers and client epochs belong to the role that wrote them (`role`, part of their
///   keys), so no role can forge or see another's.
///
/// The table owner (who ran setup) bypasses the policies: it stays the administrator. Roles log
/// in as themselves (policies read `current_user`).
///
/// Related documentation: https://www.postgresql.org/docs/15/ddl-rowsecurity.html
enum PostgresScopes {
    static let base: [String] = [
        "ALTER TABLE tandem_tables ADD COLUMN IF NOT EXISTS scoped boolean NOT NULL DEFAULT false",
        "ALTER TABLE tandem_changes ADD COLUMN IF NOT EXISTS scope text",
        "CREATE INDEX IF NOT EXISTS tandem_changes_scope ON tandem_changes(scope, xid)",
        "CREATE TABLE IF NOT EXISTS tandem_grants(role name NOT NULL, scope text NOT NULL, PRIMARY KEY (role, scope))",
        "CREATE TABLE IF NOT EXISTS tandem_grant_versions(role name PRIMARY KEY, version bigint NOT NULL)",
        "ALTER TABLE tandem_uploads ADD COLUMN IF NOT EXISTS role name NOT NULL DEFAULT current_user",
        "ALTER TABLE tandem_clients ADD COLUMN IF NOT EXISTS role name NOT NULL DEFAULT current_user",
        """
        DO $d$ BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
                           WHERE i.indrelid = 'tandem_uploads'::regclass AND i.indisprimary AND a.attname = 'role') THEN
                ALTER TABLE tandem_uploads DROP CONSTRAINT IF EXISTS tandem_uploads_pkey;
                ALTER TABLE tandem_uploads ADD PRIMARY KEY (role, client_id, tx_id);
            END IF;
            IF NOT EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
                           WHERE i.indrelid = 'tandem_clients'::regclass AND i.indisprimary AND a.attname = 'role') THEN
                ALTER TABLE tandem_clients DROP CONSTRAINT IF EXISTS tandem_clients_pkey;
                ALTER TABLE tandem_clients ADD PRIMARY KEY (role, client_id);
            END IF;
        END $d$
        """,
        // A marker per upload batch: its first transaction id (`tx_id`), its last, and every
        // id with its digest; found by its last id (a row of one transaction has only `tx_id`).
        "ALTER TABLE tandem_uploads ADD COLUMN IF NOT EXISTS last_tx_id bigint",
        "ALTER TABLE tandem_uploads ADD COLUMN IF NOT EXISTS tx_ids bigint[]",
        "ALTER TABLE tandem_uploads ADD COLUMN IF NOT EXISTS digests text[]",
        // Kept as they are, out of line: compressing a batch's ids and digests (28 KB at 1,000
        // transactions) took half of its marker's 7 ms.
        "ALTER TABLE tandem_uploads ALTER COLUMN tx_ids SET STORAGE EXTERNAL, ALTER COLUMN digests SET STORAGE EXTERNAL",
        "CREATE INDEX IF NOT EXISTS tandem_uploads_last ON tandem_uploads(role, client_id, (coalesce(last_tx_id, tx_id)))",
        """
        CREATE OR REPLACE FUNCTION tandem_scopes() RETURNS text[] LANGUAGE sql STABLE SET search_path FROM CURRENT AS $f$
            SELECT coalesce(array_agg(g.scope), '{}') FROM tandem_grants g WHERE g.role = current_user
        $f$
        """,
        "ALTER TABLE tandem_grants ENABLE ROW LEVEL SECURITY",
        "DROP POLICY IF EXISTS tandem_own ON tandem_grants",
        "CREATE POLICY tandem_own ON tandem_grants FOR SELECT USING (role = current_user)",
        "ALTER TABLE tandem_grant_versions ENABLE ROW LEVEL SECURITY",
        "DROP POLICY IF EXISTS tandem_own ON tandem_grant_versions",
        "CREATE POLICY tandem_own ON tandem_grant_versions FOR SELECT USING (role = current_user)",
        "ALTER TABLE tandem_uploads ENABLE ROW LEVEL SECURITY",
        "DROP POLICY IF EXISTS tandem_own ON tandem_uploads",
        "CREATE POLICY tandem_own ON tandem_uploads USING (role = current_user) WITH CHECK (role = current_user)",
        "ALTER TABLE tandem_clients ENABLE ROW LEVEL SECURITY",
        "DROP POLICY IF EXISTS tandem_own ON tandem_clients",
        "CREATE POLICY tandem_own ON tandem_clients USING (role = current_user) WITH CHECK (role = current_user)",
        "ALTER TABLE tandem_changes ENABLE ROW LEVEL SECURITY",
        "DROP POLICY IF EXISTS tandem_scope ON tandem_changes",
        """
        CREATE POLICY tandem_scope ON tandem_changes FOR SELECT
            USING (scope IS NULL OR scope = ANY ((SELECT tandem_scopes())::text[]) OR scope = 'role:' || current_user)
        """,
        "DROP FUNCTION IF EXISTS tandem_log_missing(text, text)",
        // A PATCH of a row that is not there (``PostgresUpload``): logs the row's deletion for the
        // caller's clients, unless the row is there after all (seen by the caller or not: false,
        // nothing logged). Runs as the administrator, so it checks what it is asked: a synced
        // table the caller may update (`session_user`, the role the client logged in as) and a
        // row that is really missing. The deletion is logged first, then the id's slot in the
        // primary key is taken (an insert of the bare id, undone): an insert of the id not yet
        // committed makes this wait for it, and one that comes later logs after the deletion.
        """
        CREATE FUNCTION tandem_log_missing(t text, row_id text) RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER
        SET search_path FROM CURRENT AS $f$
        DECLARE
            is_scoped boolean;
            target text;
            missing boolean;
        BEGIN
            SELECT s.scoped INTO is_scoped FROM tandem_tables s WHERE s.table_name = t;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'table % is not synced by Tandem', t USING ERRCODE = '42P01';
            END IF;
            target := format('%I.%I', current_schema(), t);
            IF row_id IS NULL OR NOT has_table_privilege(session_user, target, 'UPDATE') THEN
                RAISE EXCEPTION 'permission denied for table %', t USING ERRCODE = '42501';
            END IF;
            BEGIN
                INSERT INTO tandem_changes(op, type, id, scope)
                VALUES ('DELETE', t, row_id, CASE WHEN is_scoped THEN 'role:' || session_user END);
                BEGIN
                    EXECUTE format('INSERT INTO %s(id) VALUES ($1) ON CONFLICT (id) DO NOTHING RETURNING true', target) INTO missing USING row_id;
                    RAISE EXCEPTION 'undone' USING ERRCODE = '\(PostgresUpload.undoneState)';
                EXCEPTION
                    WHEN SQLSTATE '\(PostgresUpload.undoneState)' THEN NULL;
                    WHEN integrity_constraint_violation THEN  -- the table refuses a bare id: the row as it stands
                        EXECUTE format('SELECT NOT EXISTS (SELECT 1 FROM %s WHERE id = $1)', target) INTO missing USING row_id;
                END;
                IF missing IS NOT TRUE THEN
                    RAISE EXCEPTION 'undone' USING ERRCODE = '\(PostgresUpload.undoneState)';  -- the deletion too
                END IF;
            EXCEPTION WHEN SQLSTATE '\(PostgresUpload.undoneState)' THEN
                RETURN false;
            END;
            PERFORM \(PostgresSetup.notify);
            RETURN true;
        END
        $f$
        """,
        """
        CREATE OR REPLACE FUNCTION tandem_new_history() RETURNS void LANGUAGE plpgsql SECURITY DEFINER
        SET search_path FROM CURRENT AS $f$
        BEGIN
            PERFORM pg_advisory_xact_lock(7340978);
            IF (SELECT split_part(value, '/', 1)::numeric % 4294967296 = xmin::text::numeric FROM tandem_meta WHERE key = 'history') THEN
                RETURN;  -- written in this cluster (or another process did it)
            END IF;
            DELETE FROM tandem_changes;
            UPDATE tandem_clients SET cursor_xmin = NULL;
            DELETE FROM tandem_meta WHERE key IN ('horizon', 'compaction');
            INSERT INTO tandem_meta(key, value) VALUES ('history', pg_current_xact_id()::text || '/' || gen_random_uuid()::text)
            ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;
        END
        $f$
        """,
    ]

    /// The policy of `table`: none for a global table; its scope column's value among the role's
    /// scopes; or its parent row visible to the role (with an index on the reference column).
    static func applyPolicy(to table: TableSchema, in schema: Schema, on connection: PostgresConnection) throws {
        let name = SQLText.identifier(table.name)
        try connection.execute("DROP POLICY IF EXISTS tandem_scope ON \(name)")
        guard let condition = try condition(of: table, on: connection) else {
            try connection.execute("ALTER TABLE \(name) DISABLE ROW LEVEL SECURITY")
            return
        }
        try connection.execute("ALTER TABLE \(name) ENABLE ROW LEVEL SECURITY")
        try connection.execute("CREATE POLICY tandem_scope ON \(name) USING (\(condition)) WITH CHECK (\(condition))")
    }

    private static func condition(of table: TableSchema, on connection: PostgresConnection) throws -> String? {
        let name = SQLText.identifier(table.name)
        switch table.scope {
        case nil:
            return nil
        case .column(let column):
            return "(\(name).\(SQLText.identifier(column)))::text = ANY ((SELECT tandem_scopes())::text[])"
        case .parent(let parent, let via):
            let index = SQLText.identifier(PostgresSetup.objectName("tandem_via_", table.name))
            try connection.execute("CREATE INDEX IF NOT EXISTS \(index) ON \(name)(\(SQLText.identifier(via)))")
            return "EXISTS (SELECT 1 FROM \(SQLText.identifier(parent)) tandem_parent WHERE tandem_parent.id = \(name).\(SQLText.identifier(via)))"
        }
    }

    /// The scope expression of a row of `table` (`row` is `OLD` or `NEW`): NULL for a global table,
    /// `''` for a row of a scoped table without a scope value.
    static func scopeExpression(of table: TableSchema, in schema: Schema, row: String) -> String {
        switch table.scope {
        case nil:
            return "NULL::text"
        case .column(let column):
            return "coalesce((\(row).\(SQLText.identifier(column)))::text, '')"
        case .parent(let parent, let via):
            guard case .column(let column)? = schema.table(named: parent)?.scope else { return "''" }
            return "coalesce((SELECT (p.\(SQLText.identifier(column)))::text FROM \(SQLText.identifier(parent)) p WHERE p.id = \(row).\(SQLText.identifier(via))), '')"
        }
    }

    /// Gives `role` the scopes `values` and the privileges a Tandem client needs
    /// (``PostgresPrivileges``), and moves its grants' version so its clients sync their new
    /// slice. Global tables are read-only to the role unless `writeGlobal`; each grant sets that.
    static func grant(_ values: [String], to role: String, writeGlobal: Bool, on connection: PostgresConnection) throws {
        try connection.transaction {
            try PostgresPrivileges.grantClient(role, writeGlobal: writeGlobal, on: connection)
            for value in values {
                try connection.execute("INSERT INTO tandem_grants(role, scope) VALUES ($1, $2) ON CONFLICT DO NOTHING", [role, value])
            }
            try bumpVersion(of: role, on: connection)
        }
    }

    /// Takes `values` (every scope when nil) from `role`.
    static func revoke(_ values: [String]?, from role: String, on connection: PostgresConnection) throws {
        try connection.transaction {
            if let values {
                for value in values { try connection.execute("DELETE FROM tandem_grants WHERE role = $1 AND scope = $2", [role, value]) }
            } else {
                try connection.execute("DELETE FROM tandem_grants WHERE role = $1", [role])
            }
            try bumpVersion(of: role, on: connection)
        }
    }

    /// Moves `role`'s grants version on, and wakes the listening clients (at commit): a client of
    /// the role then finds its cursor's grants outdated and syncs its new slice.
    private static func bumpVersion(of role: String, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO tandem_grant_versions(role, version) VALUES ($1, 1)
            ON CONFLICT (role) DO UPDATE SET version = tandem_grant_versions.version + 1
            """, [role])
        try connection.execute("SELECT \(PostgresSetup.notify)")
    }
}
