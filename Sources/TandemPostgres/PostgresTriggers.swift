import Foundation
import Tandem

/// The functions and triggers that log every change of a synced table into `tandem_changes`:
/// `tandem_row_<t>` (a row's declared columns as Tandem's JSON), `tandem_log_<t>` (every row
/// change by anyone, with its scope), `tandem_truncate_<t>` (`TRUNCATE`, seen by every client)
/// and, for a table no scope concerns, the upload log (``installUploadLog(_:in:on:)``). The
/// log's functions run as the administrator who ran setup (`SECURITY DEFINER`), so roles that
/// may not write the log (scoped sync) still have their changes logged.
enum PostgresTriggers {
    /// Installs `table`'s functions and triggers (again: setup run again replaces them).
    ///
    /// The row trigger logs each change with the row as the table holds it when the trigger
    /// runs, read by id, not as the statement wrote it (`NEW`): another trigger may change or
    /// remove the row again inside the statement, and that change's own row trigger, at the end
    /// of its nested statement, may run first, so logging `NEW` would put the older value last
    /// and leave clients with it. Read when it runs, whichever entry comes last carries the
    /// row's final state: a row no longer there logs a DELETE (nothing after an INSERT, whose
    /// removal was logged), and a deleted row that is back logs a PUT.
    static func install(_ table: TableSchema, in schema: Schema, on connection: PostgresConnection) throws {
        let name = SQLText.identifier(table.name)
        let row = SQLText.identifier(PostgresSetup.objectName("tandem_row_", table.name))
        let log = SQLText.identifier(PostgresSetup.objectName("tandem_log_", table.name))
        let truncate = SQLText.identifier(PostgresSetup.objectName("tandem_truncate_", table.name))
        let literal = SQLText.literal(table.name)
        try connection.execute(
            """
            CREATE OR REPLACE FUNCTION \(row)(r \(name)) RETURNS text LANGUAGE sql STABLE AS $f$
                SELECT \(PostgresSetup.stateExpression(table, row: "r"))
            $f$
            """)
        try connection.execute(
            """
            CREATE OR REPLACE FUNCTION \(log)() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $f$
            DECLARE
                old_scope text;
                new_scope text;
                tandem_op text := TG_OP;
                tandem_now \(name);
            BEGIN
                -- The row as the table holds it now: another trigger may have changed it inside the statement.
                IF TG_OP = 'DELETE' THEN
                    SELECT * INTO tandem_now FROM \(name) tandem_r WHERE tandem_r.id = OLD.id;
                ELSE
                    SELECT * INTO tandem_now FROM \(name) tandem_r WHERE tandem_r.id = NEW.id;
                END IF;
                IF FOUND THEN
                    IF TG_OP = 'DELETE' THEN tandem_op := 'UPDATE'; END IF;
                ELSIF TG_OP = 'INSERT' THEN
                    RETURN NULL;  -- removed again: whatever removed it was logged
                ELSE
                    tandem_op := 'DELETE';
                END IF;
                IF tandem_op <> 'INSERT' THEN old_scope := \(PostgresScopes.scopeExpression(of: table, in: schema, row: "OLD")); END IF;
                IF tandem_op <> 'DELETE' THEN new_scope := \(PostgresScopes.scopeExpression(of: table, in: schema, row: "tandem_now")); END IF;
                IF tandem_op = 'UPDATE' AND OLD.id = tandem_now.id AND old_scope IS NOT DISTINCT FROM new_scope AND \(row)(OLD) = \(row)(tandem_now)
                   AND current_setting('tandem.upload', true) IS DISTINCT FROM 'on' THEN
                    RETURN NULL;  -- another application changed only columns the schema does not declare
                END IF;
                IF tandem_op <> 'INSERT' AND (tandem_op = 'DELETE' OR OLD.id IS DISTINCT FROM tandem_now.id OR old_scope IS DISTINCT FROM new_scope) THEN
                    INSERT INTO tandem_changes(op, type, id, scope) VALUES ('DELETE', \(literal), OLD.id, old_scope);
                END IF;
                IF tandem_op <> 'DELETE' THEN
                    INSERT INTO tandem_changes(op, type, id, data, scope) VALUES ('PUT', \(literal), tandem_now.id, \(row)(tandem_now), new_scope);
                END IF;
            \(childrenFollow(table, in: schema))
                PERFORM \(PostgresSetup.notify);
                RETURN NULL;
            END
            $f$
            """)
        // One transaction (setup's): the row trigger skips uploads exactly when the upload log is there.
        let when = try installUploadLog(table, in: schema, on: connection) ? " WHEN (current_setting('tandem.upload', true) IS DISTINCT FROM 'on')" : ""
        try connection.execute("CREATE OR REPLACE TRIGGER \(log) AFTER INSERT OR UPDATE OR DELETE ON \(name) FOR EACH ROW\(when) EXECUTE FUNCTION \(log)()")
        try connection.execute("CREATE OR REPLACE TRIGGER \(truncate) AFTER TRUNCATE ON \(name) FOR EACH STATEMENT EXECUTE FUNCTION tandem_log_truncate(\(literal))")
    }

    /// The upload log's function and trigger name prefixes, one per event.
    static let uploadLogPrefixes = ["tandem_upload_insert_", "tandem_upload_update_", "tandem_upload_delete_"]

    /// Whether `table` is an ordinary table that no table inherits from and that is no partition.
    private static func isPlainTable(_ table: String, on connection: PostgresConnection) throws -> Bool {
        try connection.execute(
            """
            SELECT c.relkind = 'r' AND NOT c.relispartition AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhparent = c.oid)
            FROM pg_class c WHERE c.oid = $1::regclass
            """, [SQLText.identifier(table)]
        ).first?.first == "t"
    }

    /// The upload log of a table no scope concerns: inside an upload's transaction (marked
    /// `tandem.upload`, which skips the row trigger) every statement on the table logs its rows
    /// at its end, in one `INSERT … SELECT` from its transition tables, where the row trigger's
    /// one-row `INSERT` per row cost about 20 µs of each row's 27 (a 1,000-row upload's 32 ms of
    /// trigger time). It logs each row as the table holds it when the statement ends (a PUT,
    /// read by id), and a DELETE for each id the statement removed that the table no longer
    /// holds, in its transition tables' order (an UPDATE's deletions first; an upsert's updated
    /// rows before its inserted ones): an upload's statement writes each row once, so no row's
    /// changes change order, and a row that another trigger changed again inside the statement
    /// is logged as it ended. PostgreSQL takes transition tables on a trigger of one event only:
    /// one function and trigger per event (`tandem_upload_insert_<t>`, `_update_`, `_delete_`).
    ///
    /// Installed for a table whose row changes log a PUT of the row or a DELETE of its id and
    /// nothing else (no scope, no table scoped through it), that is an ordinary table (statement
    /// triggers are not copied to partitions or inheritance children, so a write straight into
    /// one inside an upload would be logged by neither trigger), and whose names fit
    /// PostgreSQL's 63 bytes whole (``PostgresSetup/objectName(_:_:)`` cuts by characters: a
    /// long non-ASCII name cut by PostgreSQL could name another table's function). Dropped when
    /// a table no longer qualifies (setup run again after a schema change).
    /// - Returns: whether it is installed.
    ///
    /// Related documentation: https://www.postgresql.org/docs/15/sql-createtrigger.html (REFERENCING)
    private static func installUploadLog(_ table: TableSchema, in schema: Schema, on connection: PostgresConnection) throws -> Bool {
        // A cut name is not this table's: never installed, and nothing of this table's to drop.
        guard uploadLogPrefixes.allSatisfy({ PostgresSetup.objectName($0, table.name).utf8.count <= 63 }) else { return false }
        let enabled = try table.scope == nil && scopedChildren(of: table, in: schema).isEmpty && isPlainTable(table.name, on: connection)
        let name = SQLText.identifier(table.name), literal = SQLText.literal(table.name)
        let row = SQLText.identifier(PostgresSetup.objectName("tandem_row_", table.name))
        let puts = """
            INSERT INTO tandem_changes(op, type, id, data) SELECT 'PUT', \(literal), tandem_r.id, \(row)(tandem_r.*)
                FROM (SELECT id, row_number() OVER () AS tandem_at FROM tandem_new) tandem_n JOIN \(name) tandem_r ON tandem_r.id = tandem_n.id
                ORDER BY tandem_n.tandem_at;
            logged := logged OR FOUND;
            """
        let deletes = """
            INSERT INTO tandem_changes(op, type, id) SELECT 'DELETE', \(literal), tandem_o.id
                FROM (SELECT id, row_number() OVER () AS tandem_at FROM tandem_old) tandem_o
                WHERE NOT EXISTS (SELECT 1 FROM \(name) tandem_r WHERE tandem_r.id = tandem_o.id) ORDER BY tandem_o.tandem_at;
            logged := logged OR FOUND;
            """
        let events = [
            (event: "INSERT", prefix: uploadLogPrefixes[0], tables: "NEW TABLE AS tandem_new", body: puts),
            (event: "UPDATE", prefix: uploadLogPrefixes[1], tables: "OLD TABLE AS tandem_old NEW TABLE AS tandem_new", body: deletes + "\n" + puts),
            (event: "DELETE", prefix: uploadLogPrefixes[2], tables: "OLD TABLE AS tandem_old", body: deletes),
        ]
        for event in events {
            let object = SQLText.identifier(PostgresSetup.objectName(event.prefix, table.name))
            guard enabled else {
                try connection.execute("DROP TRIGGER IF EXISTS \(object) ON \(name)")
                try connection.execute("DROP FUNCTION IF EXISTS \(object)()")
                continue
            }
            try connection.execute(
                """
                CREATE OR REPLACE FUNCTION \(object)() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $f$
                DECLARE
                    logged boolean := false;
                BEGIN
                    \(event.body)
                    IF logged THEN PERFORM \(PostgresSetup.notify); END IF;
                    RETURN NULL;
                END
                $f$
                """)
            try connection.execute(
                """
                CREATE OR REPLACE TRIGGER \(object) AFTER \(event.event) ON \(name) REFERENCING \(event.tables) FOR EACH STATEMENT
                WHEN (current_setting('tandem.upload', true) = 'on') EXECUTE FUNCTION \(object)()
                """)
        }
        return enabled
    }

    /// The rows of tables scoped through `table` follow its scope: when a row arrives, changes its
    /// id or its scope, its children are logged again under the new scope (and deleted under the
    /// old one); when it goes, they are deleted for the clients that saw them.
    private static func childrenFollow(_ table: TableSchema, in schema: Schema) -> String {
        let children = scopedChildren(of: table, in: schema)
        guard !children.isEmpty else { return "" }
        let statements = children.map { child, via in
            let name = SQLText.identifier(child.name), literal = SQLText.literal(child.name), reference = SQLText.identifier(via)
            let row = SQLText.identifier(PostgresSetup.objectName("tandem_row_", child.name))
            return """
                        IF tandem_op <> 'INSERT' THEN
                            INSERT INTO tandem_changes(op, type, id, scope) SELECT 'DELETE', \(literal), c.id, old_scope FROM \(name) c WHERE c.\(reference) = OLD.id;
                        END IF;
                        IF tandem_op <> 'DELETE' THEN
                            INSERT INTO tandem_changes(op, type, id, data, scope) SELECT 'PUT', \(literal), c.id, \(row)(c), new_scope FROM \(name) c WHERE c.\(reference) = tandem_now.id;
                        END IF;
                """
        }.joined(separator: "\n")
        return """
                IF tandem_op <> 'UPDATE' OR OLD.id IS DISTINCT FROM tandem_now.id OR old_scope IS DISTINCT FROM new_scope THEN
            \(statements)
                END IF;
            """
    }

    /// The synced tables scoped through `table`, each with its column that references it.
    private static func scopedChildren(of table: TableSchema, in schema: Schema) -> [(TableSchema, String)] {
        schema.tables.compactMap { child in
            guard case .parent(let parent, let via)? = child.scope, parent == table.name, !child.localOnly else { return nil }
            return (child, via)
        }
    }
}
