import Foundation
import Tandem

/// The server side of the schema's column renames (``Migration/Step/renameColumn(table:from:to:)``),
/// in expand and contract steps, so that hosts of both versions sync through one server while a
/// rename rolls through a fleet.
///
/// - **Expand** (`tandem backend setup` with the new schema): the new column is added and filled
///   from the old one, both are synced columns (each change logs both, so a host of either
///   version reads its own), and a `BEFORE` trigger keeps them equal: a write that changes one
///   sets the other; a write that changes both (a PUT, which sets every column its host
///   declares, the other one NULL) keeps the one it did not leave NULL.
/// - **Contract** (setup with `--contract`, once every host runs the new schema): the trigger and
///   the old column are dropped; a host still on the old schema then has its uploads of the old
///   column refused and set aside, naming it.
///
/// Related documentation: https://www.postgresql.org/docs/current/plpgsql-trigger.html
enum PostgresRenames {
    /// Each renamed column of `table` as (the name the server may still have, the name now),
    /// following chains (`a` to `b`, then `b` to `c`: `a` to `c`); with `declaredOnly`, only those
    /// whose name now `table` declares (a column renamed, then dropped, is not).
    static func pairs(of table: TableSchema, in schema: Schema, declaredOnly: Bool = true) -> [(from: String, to: String)] {
        var origin: [String: String] = [:]  // name now → first name
        var order: [String] = []
        for entry in PostgresMigrationSteps.entries(of: schema) where entry.table == table.name {
            guard case .renameColumn(_, let from, let to) = entry.step else { continue }
            origin[to] = origin.removeValue(forKey: from) ?? from
            order.append(to)
        }
        let names = declaredOnly ? table.columns.map(\.name) : order.filter { origin[$0] != nil }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        return names.compactMap { name in origin[name].flatMap { $0 == name ? nil : ($0, name) } }
    }

    /// `table` as the server syncs it while expanding: its columns, and the old name of each
    /// renamed column the server still has (of a column renamed and then dropped too, which
    /// ``PostgresDrops`` keeps). Contracting drops those, and the trigger that kept them equal.
    static func serverTable(_ table: TableSchema, in schema: Schema, contract: Bool, on connection: PostgresConnection) throws -> TableSchema {
        let pairs = pairs(of: table, in: schema, declaredOnly: false)
        let name = SQLText.identifier(table.name)
        let function = SQLText.identifier(PostgresSetup.objectName("tandem_rename_", table.name))
        if contract {
            try connection.execute("DROP TRIGGER IF EXISTS \(function) ON \(name)")
            try connection.execute("DROP FUNCTION IF EXISTS \(function)()")
        }
        guard !pairs.isEmpty else { return table }
        let existing = try PostgresSetup.existingColumns(of: table.name, on: connection)
        var served = table
        for pair in pairs {
            guard let serverType = existing[pair.from] else { continue }
            if contract {
                try connection.execute("ALTER TABLE \(name) DROP COLUMN \(SQLText.identifier(pair.from))")
            } else if let type = table.columns.first(where: { $0.name == pair.to })?.type ?? PostgresTypeChanges.tandemType(serverType) {
                served.columns.append(ColumnSchema(name: pair.from, type: type))
            }
        }
        return served
    }

    /// After the table's columns and log triggers are in place (expanding): the trigger that
    /// keeps each old and new column equal, and the new columns filled from the old ones (each
    /// row filled is logged, so hosts download the new column's values).
    static func keepEqual(_ table: TableSchema, in schema: Schema, served: TableSchema, on connection: PostgresConnection) throws {
        let pairs = pairs(of: table, in: schema, declaredOnly: false).filter { pair in
            served.columns.contains { $0.name == pair.from } && served.columns.contains { $0.name == pair.to }
        }
        let name = SQLText.identifier(table.name)
        let function = SQLText.identifier(PostgresSetup.objectName("tandem_rename_", table.name))
        guard !pairs.isEmpty else {
            // A trigger an earlier setup made for columns the server no longer serves in pairs.
            try connection.execute("DROP TRIGGER IF EXISTS \(function) ON \(name)")
            try connection.execute("DROP FUNCTION IF EXISTS \(function)()")
            return
        }
        let blocks = pairs.map { pair in
            let (o, n) = (SQLText.identifier(pair.from), SQLText.identifier(pair.to))
            return """
                IF TG_OP = 'INSERT' THEN
                    IF NEW.\(n) IS NULL THEN NEW.\(n) := NEW.\(o); ELSIF NEW.\(o) IS NULL THEN NEW.\(o) := NEW.\(n); END IF;
                ELSIF NEW.\(n) IS DISTINCT FROM OLD.\(n) AND NEW.\(o) IS NOT DISTINCT FROM OLD.\(o) THEN NEW.\(o) := NEW.\(n);
                ELSIF NEW.\(o) IS DISTINCT FROM OLD.\(o) AND NEW.\(n) IS NOT DISTINCT FROM OLD.\(n) THEN NEW.\(n) := NEW.\(o);
                ELSIF NEW.\(o) IS DISTINCT FROM NEW.\(n) THEN
                    IF NEW.\(n) IS NULL THEN NEW.\(n) := NEW.\(o); ELSE NEW.\(o) := NEW.\(n); END IF;
                END IF;
                """
        }
        try connection.execute(
            """
            CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $f$
            BEGIN
            \(blocks.joined(separator: "\n"))
                RETURN NEW;
            END
            $f$
            """)
        try connection.execute("CREATE OR REPLACE TRIGGER \(function) BEFORE INSERT OR UPDATE ON \(name) FOR EACH ROW EXECUTE FUNCTION \(function)()")
        let differs = pairs.map { "\(SQLText.identifier($0.to)) IS DISTINCT FROM \(SQLText.identifier($0.from))" }.joined(separator: " OR ")
        let sets = pairs.map { "\(SQLText.identifier($0.to)) = \(SQLText.identifier($0.from))" }.joined(separator: ", ")
        try connection.execute("UPDATE \(name) SET \(sets) WHERE \(differs)")
    }

    /// The schema's table renames (``Migration/Step/renameTable(from:to:)``), made on the server
    /// in one step each, in the migrations' order, each once: a step done is recorded in
    /// `tandem_meta` (`renamed_table:<migration id>:<step>`), so that a setup run again, a table
    /// renamed back, or a new table that takes an old name is never renamed a second time. A
    /// table the server syncs under the old name is renamed with its rows, its Tandem triggers,
    /// functions and index dropped (setup installs them again under the new name) and its
    /// registration moved, so that the next step of a chain finds it. A step whose old table
    /// the server never had is recorded as done.
    /// - Throws: ``PostgresError`` when the new name is taken by another table on the server.
    static func renameTables(of schema: Schema, on connection: PostgresConnection) throws {
        for migration in schema.migrations {
            for (index, step) in migration.steps.enumerated() {
                guard case .renameTable(let from, let to) = step else { continue }
                let key = "renamed_table:\(migration.id):\(index)"
                guard (try connection.execute("SELECT 1 FROM tandem_meta WHERE key = $1", [key])).isEmpty else { continue }
                let registered = !(try connection.execute("SELECT 1 FROM tandem_tables WHERE table_name = $1", [from])).isEmpty
                if registered {
                    guard try connection.execute("SELECT to_regclass($1) IS NULL", [SQLText.identifier(to)]).first?.first == "t" else {
                        throw PostgresError(
                            "migration '\(migration.id)' renames table \(from) to \(to), but the server has a table \(to) already: rename or drop that one first, then run setup again"
                        )
                    }
                    try rename(from, to: to, on: connection)
                }
                try connection.execute("INSERT INTO tandem_meta(key, value) VALUES ($1, $2)", [key, "\(from) -> \(to)"])
            }
        }
    }

    private static func rename(_ from: String, to: String, on connection: PostgresConnection) throws {
        let old = SQLText.identifier(from)
        for row in try connection.execute(
            "SELECT tgname FROM pg_trigger WHERE tgrelid = to_regclass($1) AND NOT tgisinternal AND tgname LIKE 'tandem\\_%'", [old])
        {
            if let trigger = row[0] { try connection.execute("DROP TRIGGER \(SQLText.identifier(trigger)) ON \(old)") }
        }
        try connection.execute("DROP FUNCTION IF EXISTS \(SQLText.identifier(PostgresSetup.objectName("tandem_row_", from)))(\(old))")
        for prefix in ["tandem_log_", "tandem_rename_"] + PostgresTriggers.uploadLogPrefixes {
            try connection.execute("DROP FUNCTION IF EXISTS \(SQLText.identifier(PostgresSetup.objectName(prefix, from)))()")
        }
        try connection.execute("DROP INDEX IF EXISTS \(SQLText.identifier(PostgresSetup.objectName("tandem_via_", from)))")
        try connection.execute("ALTER TABLE \(old) RENAME TO \(SQLText.identifier(to))")
        try connection.execute("UPDATE tandem_columns SET table_name = $2 WHERE table_name = $1", [from, to])
        try connection.execute("UPDATE tandem_tables SET table_name = $2 WHERE table_name = $1", [from, to])
    }
}
