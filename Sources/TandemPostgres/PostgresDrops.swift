import Foundation
import Tandem

/// The server side of the schema's drops (``Migration/Step/dropColumn(table:column:discardValues:)``
/// and ``Migration/Step/dropTable(table:discardRows:)``), in expand and contract steps, so that
/// hosts of both versions sync through one server while a drop rolls through a fleet.
///
/// - **Expand** (`tandem backend setup` with the new schema): a dropped column the server has
///   stays a synced column (hosts on the old release upload and download it; a migrated host
///   stores rows without it), and a dropped table stays as it was set up.
/// - **Contract** (setup with `--contract`, once every host runs the new schema): the column is
///   dropped from its table, and the table with its log functions; a host still on the old
///   schema then has its uploads of them refused and set aside, naming them.
///
/// Related documentation: https://www.postgresql.org/docs/current/sql-altertable.html
enum PostgresDrops {
    /// The columns of `table` that the schema's migrations drop and it does not declare again.
    static func droppedColumns(of table: TableSchema, in schema: Schema) -> [String] {
        // Exact names: the server's columns are told apart by case (`Body` is not `body`).
        let declared = Set(table.columns.map(\.name))
        var dropped: [String] = []
        for entry in PostgresMigrationSteps.entries(of: schema) where entry.table == table.name {
            guard case .dropColumn(_, let column, _) = entry.step, !declared.contains(column), !dropped.contains(column) else { continue }
            dropped.append(column)
        }
        return dropped
    }

    /// The tables that the schema's migrations drop and it does not declare again.
    static func droppedTables(in schema: Schema) -> [String] {
        var dropped: [String] = []
        for migration in schema.migrations {
            for case .dropTable(let name, _) in migration.steps where schema.table(named: name) == nil && !dropped.contains(name) {
                dropped.append(name)
            }
        }
        return dropped
    }

    /// `table` as the server syncs it: while expanding, with the dropped columns the server
    /// still has (as the types it has them in); contracting drops those columns.
    static func serverTable(_ table: TableSchema, declared: TableSchema, in schema: Schema, contract: Bool, on connection: PostgresConnection) throws -> TableSchema {
        let dropped = droppedColumns(of: declared, in: schema)
        guard !dropped.isEmpty else { return table }
        let name = SQLText.identifier(table.name)
        let types = try PostgresSetup.existingColumns(of: table.name, on: connection)
        var served = table
        for column in dropped {
            guard let type = types[column] else { continue }
            if contract {
                try connection.execute("ALTER TABLE \(name) DROP COLUMN \(SQLText.identifier(column))")
            } else if let synced = PostgresTypeChanges.tandemType(type),
                !served.columns.contains(where: { $0.name == column })
            {
                served.columns.append(ColumnSchema(name: column, type: synced))
            }
        }
        return served
    }

    /// Contracting: drops each table the schema's migrations drop, with its log functions, and
    /// forgets it as a synced table. Objects of the user's that depend on the table (a view, a
    /// foreign key) make this fail, naming them, rather than go with it.
    static func dropTables(of schema: Schema, on connection: PostgresConnection) throws {
        for table in droppedTables(in: schema) {
            guard !(try connection.execute("SELECT 1 FROM tandem_tables WHERE table_name = $1", [table])).isEmpty else { continue }
            let name = SQLText.identifier(table)
            let row = SQLText.identifier(PostgresSetup.objectName("tandem_row_", table))
            try connection.execute("DROP FUNCTION IF EXISTS \(row)(\(name))")
            try connection.execute("DROP TABLE IF EXISTS \(name)")
            for prefix in ["tandem_log_", "tandem_rename_"] + PostgresTriggers.uploadLogPrefixes {
                try connection.execute("DROP FUNCTION IF EXISTS \(SQLText.identifier(PostgresSetup.objectName(prefix, table)))()")
            }
            try connection.execute("DELETE FROM tandem_columns WHERE table_name = $1", [table])
            try connection.execute("DELETE FROM tandem_tables WHERE table_name = $1", [table])
        }
    }
}
