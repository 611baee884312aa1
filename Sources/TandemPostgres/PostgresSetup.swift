import Foundation
import Tandem

/// The server side of the PostgreSQL backend: an ordinary typed table per synced table, the
/// registry of the columns Tandem owns in it (`tandem_columns`), a change log that every row
/// change by anyone is recorded in (a row trigger and a TRUNCATE trigger per table), the
/// applied-upload record, the per-client epochs and cursors, and the server's id and history.
/// Idempotent: run again after a schema upgrade, it adds tables and columns.
///
/// Refused, changing nothing (one transaction): a synced table whose name starts with the
/// backend's own prefix `tandem_`, a name longer than PostgreSQL's 63 bytes, an existing table
/// whose primary key is not `id text` alone, a column of another type than the schema declares,
/// and NOT NULL columns that uploads could not fill (a declared column: clients may write NULL to
/// it; another column without a default: uploads never write it).
///
/// Related documentation: https://www.postgresql.org/docs/15/functions-info.html#FUNCTIONS-PG-SNAPSHOT,
/// https://www.postgresql.org/docs/15/sql-createtrigger.html
enum PostgresSetup {
    static let channel = "tandem_changes"
    /// What Tandem's triggers and functions notify with: the channel, and the notifying
    /// transaction's id as the payload (`tandem:<xid>`), by which a wait leaves out a
    /// notification of a transaction its cursor already holds (``PostgresBackend/announcement(_:on:)``).
    static let notify = "pg_notify('\(channel)', 'tandem:' || pg_current_xact_id()::text)"
    /// The layout this code reads and writes; a server set up by older code is refused until set up again.
    static let layout = "5"
    /// Names the backend reserves for itself.
    static let reservedPrefix = "tandem_"

    /// The backend's own tables and functions, one statement each.
    static let base: [String] =
        [
            """
            CREATE TABLE IF NOT EXISTS tandem_meta(key text PRIMARY KEY, value text NOT NULL)
            """,
            """
            INSERT INTO tandem_meta(key, value) VALUES ('server_id', gen_random_uuid()::text) ON CONFLICT (key) DO NOTHING
            """,
            """
            INSERT INTO tandem_meta(key, value) VALUES ('history', pg_current_xact_id()::text || '/' || gen_random_uuid()::text) ON CONFLICT (key) DO NOTHING
            """,
            """
            CREATE TABLE IF NOT EXISTS tandem_changes(
                version bigserial PRIMARY KEY,
                xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
                op text NOT NULL, type text NOT NULL, id text NOT NULL, data text)
            """,
            """
            CREATE INDEX IF NOT EXISTS tandem_changes_cursor ON tandem_changes(xid, version)
            """,
            """
            CREATE TABLE IF NOT EXISTS tandem_uploads(client_id text NOT NULL, tx_id bigint NOT NULL, digest text NOT NULL,
                PRIMARY KEY (client_id, tx_id))
            """,
            """
            CREATE TABLE IF NOT EXISTS tandem_clients(client_id text PRIMARY KEY, epoch bigint NOT NULL)
            """,
            """
            ALTER TABLE tandem_clients ADD COLUMN IF NOT EXISTS cursor_xmin xid8
            """,
            """
            ALTER TABLE tandem_clients ADD COLUMN IF NOT EXISTS seen_at timestamptz
            """,
            """
            CREATE TABLE IF NOT EXISTS tandem_tables(table_name text PRIMARY KEY)
            """,
            """
            CREATE TABLE IF NOT EXISTS tandem_columns(table_name text NOT NULL, column_name text NOT NULL, type text NOT NULL,
                position int NOT NULL, PRIMARY KEY (table_name, column_name))
            """,
            // Columns a migration dropped, served while hosts of the older schema remain (``PostgresDrops``).
            "ALTER TABLE tandem_columns ADD COLUMN IF NOT EXISTS kept_for_older boolean NOT NULL DEFAULT false",
            """
            CREATE OR REPLACE FUNCTION tandem_real(x double precision) RETURNS json LANGUAGE sql IMMUTABLE AS $f$
                SELECT CASE WHEN x IS NULL OR x = 'Infinity' OR x = '-Infinity' OR x = 'NaN' THEN NULL
                            WHEN x::text ~ '^-?[0-9]+$' THEN (x::text || '.0')::json ELSE x::text::json END
            $f$
            """,
            """
            CREATE OR REPLACE FUNCTION tandem_log_truncate() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $f$
            BEGIN
                INSERT INTO tandem_changes(op, type, id) VALUES ('TRUNCATE', TG_ARGV[0], '');
                PERFORM \(notify);
                RETURN NULL;
            END
            $f$
            """,
            """
            INSERT INTO tandem_meta(key, value) VALUES ('layout', '\(layout)') ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
            """,
        ] + PostgresScopes.base + PostgresUpload.pipelineFunctions

    /// The PostgreSQL type of a Tandem column.
    static func sqlType(_ type: ColumnSchema.ColumnType) -> String {
        switch type {
        case .text: return "text"
        case .integer: return "bigint"
        case .real: return "double precision"
        }
    }

    /// A per-table object's name (`tandem_log_notes`), shortened with a digest of the table's
    /// name where prefix and name pass PostgreSQL's 63 bytes.
    static func objectName(_ prefix: String, _ table: String) -> String {
        let whole = prefix + table
        if whole.utf8.count <= 63 { return whole }
        var hash: UInt32 = 0x811c_9dc5
        for byte in table.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return prefix + table.prefix(63 - prefix.utf8.count - 9) + "_" + String(format: "%08x", hash)
    }

    /// Creates or adopts every synced table of `schema` and the log machinery, in one transaction.
    /// - Throws: ``PostgresError`` naming the table and column of what can never sync (see the type).
    /// - Parameter contract: drop the old columns of the schema's renames and the triggers that
    ///   kept them equal to the new ones (``PostgresRenames``), and what its migrations drop
    ///   (``PostgresDrops``); without it, renames and drops are expanded.
    static func install(_ schema: Schema, retention: Double? = nil, contract: Bool = false, on connection: PostgresConnection) throws {
        try connection.transaction {
            try connection.execute("SELECT pg_advisory_xact_lock(7340977)")  // setups one at a time
            // Every function that names a table runs with this search path (`SET search_path FROM
            // CURRENT`): Tandem's schema, then `pg_temp`, so that no role's temporary table or
            // object in another schema can stand in for Tandem's (CVE-2018-1058's class).
            try connection.execute("SELECT set_config('search_path', quote_ident(current_schema()) || ', pg_temp', true)")
            // Reals as text read back exactly whatever the session or database sets (a type
            // change converts them through their text: ``PostgresTypeChanges``).
            try connection.execute("SELECT set_config('extra_float_digits', '1', true)")
            for statement in base { try connection.execute(statement) }
            try connection.execute(PostgresTypeChanges.realText)
            try connection.execute(PostgresTypeChanges.function)
            if let retention {
                try connection.execute(
                    "INSERT INTO tandem_meta(key, value) VALUES ('retention_seconds', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                    [String(retention)])
            }
            let schema = try schema.resolvingScopes()
            let fresh = try PostgresFills.isFresh(schema, on: connection)
            try refuseOlder(schema, on: connection)
            try PostgresRenames.renameTables(of: schema, on: connection)
            // Expanded first: the migrations' server statements were written for the tables
            // before a contract drops what older schemas use.
            try installTables(schema, contract: false, on: connection)
            try PostgresFills.run(of: schema, fresh: fresh, on: connection)
            if contract {
                try installTables(schema, contract: true, on: connection)
                try PostgresDrops.dropTables(of: schema, on: connection)
            }
            try PostgresPrivileges.install(on: connection)
        }
    }

    /// Creates or adopts every synced table of `schema`, expanding (or, with `contract`,
    /// contracting) the migrations' renames and drops.
    private static func installTables(_ schema: Schema, contract: Bool, on connection: PostgresConnection) throws {
        for table in schema.tables where !table.localOnly {
            let renamed = try PostgresRenames.serverTable(table, in: schema, contract: contract, on: connection)
            let served = try PostgresDrops.serverTable(renamed, declared: table, in: schema, contract: contract, on: connection)
            // What the server serves beyond the schema's columns (a rename's old name, a dropped
            // column) is there for hosts of an older schema.
            let kept = Set(served.columns.map(\.name)).subtracting(table.columns.map(\.name))
            try installTable(served, keptForOlder: kept, in: schema, on: connection)
            if !contract { try PostgresRenames.keepEqual(table, in: schema, served: served, on: connection) }
        }
    }

    /// Refuses a schema that lacks a migration the server was set up with (an older release's:
    /// it would set up again what the migration changed, say a table renamed away), and records
    /// `schema`'s migrations (`migration:<id>` in `tandem_meta`).
    /// - Throws: ``PostgresError`` naming the first such migration.
    private static func refuseOlder(_ schema: Schema, on connection: PostgresConnection) throws {
        let listed = Set(schema.migrations.map(\.id))
        for row in try connection.execute("SELECT substr(key, 11) FROM tandem_meta WHERE key LIKE 'migration:%' ORDER BY key") {
            guard let id = row[0] ?? nil, !listed.contains(id) else { continue }
            throw PostgresError(
                "the server was set up with migration '\(id)', which this schema does not list: set it up with the newest schema (a host on an older release migrates to it)"
            )
        }
        for migration in schema.migrations {
            try connection.execute("INSERT INTO tandem_meta(key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", ["migration:" + migration.id, migration.id])
        }
    }

    /// The columns `table` has on the server (none when it has no such table): name → type as
    /// `format_type` spells it (`text`, `bigint`, `double precision`).
    static func existingColumns(of table: String, on connection: PostgresConnection) throws -> [String: String] {
        var types: [String: String] = [:]
        for row in try connection.execute(
            "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped",
            [SQLText.identifier(table)])
        {
            if let column = row[0], let type = row[1] { types[column] = type }
        }
        return types
    }

    private static func installTable(_ table: TableSchema, keptForOlder: Set<String>, in schema: Schema, on connection: PostgresConnection) throws {
        try refuseNames(of: table)
        let name = SQLText.identifier(table.name)
        let existing = try connection.execute(
            """
            SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> '',
                   coalesce(a.attnum = ANY(i.indkey) AND array_length(i.indkey::int2[], 1) = 1, false)
            FROM pg_attribute a
            LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
            WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
            """, [name])
        var types: [String: String] = [:]
        for row in existing { if let column = row[0], let type = row[1] { types[column] = type } }
        if existing.isEmpty {
            try connection.execute("CREATE TABLE \(name)(id text PRIMARY KEY)")
        } else {
            guard let id = existing.first(where: { $0[0] == "id" }), id[1] == "text", id[4] == "t" else {
                throw PostgresError(
                    "table \(table.name) exists but \(types["id"].map { "its id column is \($0)" } ?? "has no id column")\(types["id"] == "text" ? " and not its primary key alone" : ""): Tandem needs id text PRIMARY KEY"
                )
            }
            let declared = Set(table.columns.map(\.name))
            for row in existing where row[0] != "id" && row[2] == "t" {
                let column = row[0] ?? ""
                if declared.contains(column) {
                    throw PostgresError(
                        "table \(table.name) exists but its column \(column) is NOT NULL, while clients may write NULL to it: drop the constraint (ALTER TABLE \(name) ALTER COLUMN \(SQLText.identifier(column)) DROP NOT NULL)"
                    )
                } else if row[3] != "t" {
                    throw PostgresError(
                        "table \(table.name) exists with a column \(column) that is NOT NULL without a default, which uploads never fill: give it a default or drop the constraint")
                }
            }
        }
        for column in table.columns {
            let wanted = sqlType(column.type)
            if let type = types[column.name] {
                guard type == wanted else {
                    guard let migration = PostgresTypeChanges.migration(changing: column.name, of: table.name, to: column.type, in: schema) else {
                        throw PostgresError("table \(table.name) exists but its column \(column.name) is \(type), not \(wanted) as the schema declares")
                    }
                    try PostgresTypeChanges.convert(column.name, of: table.name, from: type, to: column.type, by: migration, on: connection)
                    continue
                }
            } else {
                try connection.execute("ALTER TABLE \(name) ADD COLUMN \(SQLText.identifier(column.name)) \(wanted)")
            }
        }
        try connection.execute(
            "INSERT INTO tandem_tables(table_name, scoped) VALUES ($1, $2) ON CONFLICT (table_name) DO UPDATE SET scoped = EXCLUDED.scoped",
            [table.name, table.scope == nil ? "f" : "t"])
        try connection.execute("DELETE FROM tandem_columns WHERE table_name = $1", [table.name])
        for (position, column) in table.columns.enumerated() {
            try connection.execute(
                "INSERT INTO tandem_columns(table_name, column_name, type, position, kept_for_older) VALUES ($1, $2, $3, $4, $5)",
                [table.name, column.name, column.type.rawValue, String(position), keptForOlder.contains(column.name) ? "t" : "f"])
        }
        try PostgresTriggers.install(table, in: schema, on: connection)
        try PostgresScopes.applyPolicy(to: table, in: schema, on: connection)
    }

    /// The row's declared columns as Tandem's JSON text (reals keep a fraction, `-0.0` its sign),
    /// built by concatenation, so that no function's 100-argument limit caps the column count.
    static func stateExpression(_ table: TableSchema, row: String) -> String {
        guard !table.columns.isEmpty else { return "'{}'" }
        let members = table.columns.enumerated().map { index, column in
            let value = "\(row).\(SQLText.identifier(column.name))"
            let json = column.type == .real ? "tandem_real(\(value))::text" : "to_json(\(value))::text"
            return SQLText.literal((index == 0 ? "{" : ",") + "\"\(column.name)\":") + " || coalesce(\(json), 'null')"
        }
        return members.joined(separator: " || ") + " || '}'"
    }

    private static func refuseNames(of table: TableSchema) throws {
        if table.name.lowercased().hasPrefix(reservedPrefix) {
            throw PostgresError("table \(table.name) cannot sync through PostgreSQL: names starting with \(reservedPrefix) are reserved for the backend's own tables")
        }
        for name in [table.name] + table.columns.map(\.name) where name.utf8.count > 63 {
            throw PostgresError("table \(table.name): the name \(name) is longer than PostgreSQL's 63 bytes")
        }
    }

    /// The declared columns of the synced tables on the server (table → column → Tandem type, in
    /// schema order), and those kept for older hosts (``keptForOlder(from:)``), in one read.
    static func columnRegistry(on connection: PostgresConnection) throws -> (types: [String: [(name: String, type: ColumnSchema.ColumnType)]], kept: [String: Set<String>]) {
        let rows = try connection.execute(columnTypesQuery)
        return (columnTypes(from: rows), keptForOlder(from: rows))
    }

    /// The statement ``columnRegistry(on:)`` reads its answer with.
    static let columnTypesQuery = """
        SELECT t.table_name, c.column_name, c.type, c.kept_for_older FROM tandem_tables t
        LEFT JOIN tandem_columns c ON c.table_name = t.table_name ORDER BY t.table_name, c.position
        """

    /// The columns each table serves only for hosts of an older schema (a migration dropped
    /// them: ``PostgresDrops``), from the rows of ``columnTypesQuery``: a PUT that does not name
    /// one leaves it as it is.
    static func keptForOlder(from rows: [[String?]]) -> [String: Set<String>] {
        var kept: [String: Set<String>] = [:]
        for row in rows where row.count > 3 && row[3] == "t" {
            if let table = row[0], let column = row[1] { kept[table, default: []].insert(column) }
        }
        return kept
    }

    /// The declared columns of the synced tables, from the rows of ``columnTypesQuery``.
    static func columnTypes(from rows: [[String?]]) -> [String: [(name: String, type: ColumnSchema.ColumnType)]] {
        var tables: [String: [(name: String, type: ColumnSchema.ColumnType)]] = [:]
        for row in rows {
            guard let table = row[0] else { continue }
            tables[table, default: []] += []
            guard let column = row[1], let type = row[2].flatMap(ColumnSchema.ColumnType.init(rawValue:)) else { continue }
            tables[table, default: []].append((column, type))
        }
        return tables
    }
}
