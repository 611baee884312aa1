import Foundation
import Tandem

/// The server's side of migrations whose row changes each host computes (uploads `none`: a
/// backfill, a split): the statements a migration gives for the server (``Migration/server``),
/// run once, in order, after the tables have their columns, so that the server holds what every
/// host computes. Their row changes are logged like any write and download to every host: to one
/// that migrated they are the values it wrote itself, to one of the older release columns it
/// keeps for when it migrates. Each run is recorded in `tandem_meta` (`server_sql:<migration
/// id>:<index>`, the statement's index from 0). They run once the tables are set up and
/// expanded, before a contract drops anything: a column renamed since is there under its first
/// name and its last, a table renamed since under its new name.
enum PostgresFills {
    /// True when no table the schema or its migrations name exists on the server yet: setup
    /// creates them all, empty.
    static func isFresh(_ schema: Schema, on connection: PostgresConnection) throws -> Bool {
        var names = Set(schema.tables.filter { !$0.localOnly }.map(\.name))
        for step in schema.migrations.flatMap(\.steps) {
            switch step {
            case .renameColumn(let table, _, _), .changeType(let table, _, _, _), .fill(let table, _, _, _), .dropColumn(let table, _, _), .dropTable(let table, _):
                names.insert(table)
            case .renameTable(let from, let to): names.formUnion([from, to])
            case .copyRows(let from, let into, _, _): names.formUnion([from, into])
            case .sql, .swift: break
            }
        }
        for name in names where try connection.execute("SELECT to_regclass($1) IS NOT NULL", [SQLText.identifier(name)]).first?.first == "t" {
            return false
        }
        return true
    }

    /// Runs the server statements of every migration that have not run on this server; on a
    /// `fresh` server (``isFresh(_:on:)``) records them without running them: there are no rows
    /// to change, and the statements name the tables as they were then.
    /// - Throws: ``PostgresError`` naming the migration and the statement that failed (the
    ///   setup's transaction changes nothing).
    static func run(of schema: Schema, fresh: Bool, on connection: PostgresConnection) throws {
        for migration in schema.migrations {
            for (index, statement) in migration.server.enumerated() {
                let key = "server_sql:\(migration.id):\(index)"
                guard try connection.execute("SELECT 1 FROM tandem_meta WHERE key = $1", [key]).isEmpty else { continue }
                if !fresh {
                    do {
                        try connection.execute(statement, preparing: false)
                    } catch {
                        throw PostgresError("migration '\(migration.id)': its server statement \(index + 1) (\(statement)) failed: \(error)")
                    }
                }
                try connection.execute("INSERT INTO tandem_meta(key, value) VALUES ($1, $2)", [key, statement])
            }
        }
    }
}
