import Foundation
import Tandem

/// The server side of the PostgreSQL backend: an ordinary typed table per synced table, a change
/// log that every row change by anyone is recorded in (a trigger per table), the applied-upload
/// record, the per-client epochs and the server's id. Idempotent: run again after a schema
/// upgrade, it adds tables and columns.
///
/// Related documentation: https://www.postgresql.org/docs/15/functions-info.html#FUNCTIONS-PG-SNAPSHOT
enum PostgresSetup {
    static let channel = "tandem_changes"

    static let base = """
        CREATE TABLE IF NOT EXISTS tandem_meta(key text PRIMARY KEY, value text NOT NULL);
        INSERT INTO tandem_meta(key, value) VALUES ('server_id', gen_random_uuid()::text) ON CONFLICT (key) DO NOTHING;
        CREATE TABLE IF NOT EXISTS tandem_changes(
            version bigserial PRIMARY KEY,
            xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
            op text NOT NULL, type text NOT NULL, id text NOT NULL, data text);
        CREATE INDEX IF NOT EXISTS tandem_changes_cursor ON tandem_changes(xid, version);
        CREATE TABLE IF NOT EXISTS tandem_uploads(client_id text NOT NULL, tx_id bigint NOT NULL, digest text NOT NULL,
            PRIMARY KEY (client_id, tx_id));
        CREATE TABLE IF NOT EXISTS tandem_clients(client_id text PRIMARY KEY, epoch bigint NOT NULL);
        CREATE OR REPLACE FUNCTION tandem_real(x double precision) RETURNS json LANGUAGE sql IMMUTABLE AS $f$
            SELECT CASE WHEN x IS NULL OR x = 'Infinity' OR x = '-Infinity' OR x = 'NaN' THEN NULL
                        WHEN x::text ~ '^-?[0-9]+$' THEN (x::text || '.0')::json ELSE x::text::json END
        $f$;
        """

    /// The PostgreSQL type of a Tandem column.
    static func sqlType(_ type: ColumnSchema.ColumnType) -> String {
        switch type {
        case .text: return "text"
        case .integer: return "bigint"
        case .real: return "double precision"
        }
    }

    /// Creates or adopts every synced table of `schema` and the log machinery, in one transaction.
    /// - Throws: ``PostgresError`` naming the table and column when an existing table's column has
    ///   another type (or `id` is not a text primary key).
    static func install(_ schema: Schema, on connection: PostgresConnection) throws {
        try connection.transaction {
            try connection.execute("SELECT pg_advisory_xact_lock(7340977)")  // setups one at a time
            for statement in base.components(separatedBy: ";\n") where !statement.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                try connection.execute(statement)
            }
            for table in schema.tables where !table.localOnly {
                try installTable(table, on: connection)
            }
        }
    }

    private static func installTable(_ table: TableSchema, on connection: PostgresConnection) throws {
        let name = SQLText.identifier(table.name)
        let existing = try connection.execute("""
            SELECT column_name, data_type FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = $1
            """, [table.name])
        var types: [String: String] = [:]
        for row in existing { if let column = row[0], let type = row[1] { types[column] = type } }
        if types.isEmpty {
            try connection.execute("CREATE TABLE \(name)(id text PRIMARY KEY)")
        } else {
            guard types["id"] == "text" else {
                throw PostgresError("table \(table.name) exists but its id column is \(types["id"] ?? "missing"), not text (Tandem needs id text PRIMARY KEY)")
            }
        }
        for column in table.columns {
            let wanted = sqlType(column.type)
            if let type = types[column.name] {
                guard type == wanted else {
                    throw PostgresError("table \(table.name) exists but its column \(column.name) is \(type), not \(wanted) as the schema declares")
                }
            } else {
                try connection.execute("ALTER TABLE \(name) ADD COLUMN \(SQLText.identifier(column.name)) \(wanted)")
            }
        }
        let state = table.columns.map { column in
            let value = column.type == .real ? "tandem_real(NEW.\(SQLText.identifier(column.name)))" : "NEW.\(SQLText.identifier(column.name))"
            return "\(SQLText.literal(column.name)), \(value)"
        }.joined(separator: ", ")
        let function = SQLText.identifier("tandem_log_" + table.name)
        let literal = SQLText.literal(table.name)
        try connection.execute("""
            CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS $f$
            BEGIN
                IF TG_OP <> 'INSERT' AND (TG_OP = 'DELETE' OR OLD.id IS DISTINCT FROM NEW.id) THEN
                    INSERT INTO tandem_changes(op, type, id) VALUES ('DELETE', \(literal), OLD.id);
                END IF;
                IF TG_OP <> 'DELETE' THEN
                    INSERT INTO tandem_changes(op, type, id, data) VALUES ('PUT', \(literal), NEW.id, json_build_object(\(state))::text);
                END IF;
                PERFORM pg_notify('\(channel)', '');
                RETURN NULL;
            END
            $f$
            """)
        try connection.execute("CREATE OR REPLACE TRIGGER \(function) AFTER INSERT OR UPDATE OR DELETE ON \(name) FOR EACH ROW EXECUTE FUNCTION \(function)()")
    }

    /// The column types of the synced tables on the server: table → column → Tandem type.
    static func columnTypes(on connection: PostgresConnection) throws -> [String: [String: ColumnSchema.ColumnType]] {
        let rows = try connection.execute("""
            SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
            JOIN information_schema.triggers t ON t.event_object_table = c.table_name AND t.trigger_schema = c.table_schema
                AND t.trigger_name = 'tandem_log_' || c.table_name
            WHERE c.table_schema = current_schema()
            """)
        var tables: [String: [String: ColumnSchema.ColumnType]] = [:]
        for row in rows {
            guard let table = row[0], let column = row[1], let type = row[2], column != "id" else { continue }
            tables[table, default: [:]][column] = type == "bigint" ? .integer : type == "double precision" ? .real : .text
        }
        return tables
    }
}
