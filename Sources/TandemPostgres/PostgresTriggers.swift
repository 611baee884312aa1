import Foundation
import Tandem

/// The functions and triggers that log every change of a synced table into `tandem_changes`:
/// `tandem_row_<t>` (a row's declared columns as Tandem's JSON), `tandem_log_<t>` (every row
/// change by anyone, with its scope) and `tandem_truncate_<t>` (`TRUNCATE`, seen by every
/// client). The log's functions run as the administrator who ran setup (`SECURITY DEFINER`), so
/// roles that may not write the log (scoped sync) still have their changes logged.
enum PostgresTriggers {
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
            BEGIN
                IF TG_OP <> 'INSERT' THEN old_scope := \(PostgresScopes.scopeExpression(of: table, in: schema, row: "OLD")); END IF;
                IF TG_OP <> 'DELETE' THEN new_scope := \(PostgresScopes.scopeExpression(of: table, in: schema, row: "NEW")); END IF;
                IF TG_OP = 'UPDATE' AND OLD.id = NEW.id AND old_scope IS NOT DISTINCT FROM new_scope AND \(row)(OLD) = \(row)(NEW)
                   AND current_setting('tandem.upload', true) IS DISTINCT FROM 'on' THEN
                    RETURN NULL;  -- another application changed only columns the schema does not declare
                END IF;
                IF TG_OP <> 'INSERT' AND (TG_OP = 'DELETE' OR OLD.id IS DISTINCT FROM NEW.id OR old_scope IS DISTINCT FROM new_scope) THEN
                    INSERT INTO tandem_changes(op, type, id, scope) VALUES ('DELETE', \(literal), OLD.id, old_scope);
                END IF;
                IF TG_OP <> 'DELETE' THEN
                    INSERT INTO tandem_changes(op, type, id, data, scope) VALUES ('PUT', \(literal), NEW.id, \(row)(NEW), new_scope);
                END IF;
            \(childrenFollow(table, in: schema))
                PERFORM pg_notify('\(PostgresSetup.channel)', '');
                RETURN NULL;
            END
            $f$
            """)
        try connection.execute("CREATE OR REPLACE TRIGGER \(log) AFTER INSERT OR UPDATE OR DELETE ON \(name) FOR EACH ROW EXECUTE FUNCTION \(log)()")
        try connection.execute("CREATE OR REPLACE TRIGGER \(truncate) AFTER TRUNCATE ON \(name) FOR EACH STATEMENT EXECUTE FUNCTION tandem_log_truncate(\(literal))")
    }

    /// The rows of tables scoped through `table` follow its scope: when a row arrives, changes its
    /// id or its scope, its children are logged again under the new scope (and deleted under the
    /// old one); when it goes, they are deleted for the clients that saw them.
    private static func childrenFollow(_ table: TableSchema, in schema: Schema) -> String {
        let children = schema.tables.compactMap { child -> (TableSchema, String)? in
            guard case .parent(let parent, let via)? = child.scope, parent == table.name, !child.localOnly else { return nil }
            return (child, via)
        }
        guard !children.isEmpty else { return "" }
        let statements = children.map { child, via in
            let name = SQLText.identifier(child.name), literal = SQLText.literal(child.name), reference = SQLText.identifier(via)
            let row = SQLText.identifier(PostgresSetup.objectName("tandem_row_", child.name))
            return """
                        IF TG_OP <> 'INSERT' THEN
                            INSERT INTO tandem_changes(op, type, id, scope) SELECT 'DELETE', \(literal), c.id, old_scope FROM \(name) c WHERE c.\(reference) = OLD.id;
                        END IF;
                        IF TG_OP <> 'DELETE' THEN
                            INSERT INTO tandem_changes(op, type, id, data, scope) SELECT 'PUT', \(literal), c.id, \(row)(c), new_scope FROM \(name) c WHERE c.\(reference) = NEW.id;
                        END IF;
                """
        }.joined(separator: "\n")
        return """
                IF TG_OP <> 'UPDATE' OR OLD.id IS DISTINCT FROM NEW.id OR old_scope IS DISTINCT FROM new_scope THEN
            \(statements)
                END IF;
            """
    }
}
