import Foundation
import Tandem

/// The server's side of migrations whose row changes each host computes (uploads `none`: a
/// backfill, a split): the statements a migration gives for the server (``Migration/server``),
/// run once, in order, after the tables have their columns, so that the server holds what every
/// host computes. Their row changes are logged like any write and download to every host: to one
/// that migrated they are the values it wrote itself, to one of the older release columns it
/// keeps for when it migrates. Each run is recorded in `tandem_meta` (`server_sql:<migration
/// id>:<n>`, the statement's place from 1). They run once the tables are set up and expanded,
/// before a contract drops anything: a table renamed since is under its new name.
enum PostgresFills {
    /// Runs the server statements of every migration that have not run on this server; on a
    /// `fresh` server (no table set up before this setup) records them without running them:
    /// there are no rows to change, and the statements name tables as they were then.
    /// - Throws: ``PostgresError`` naming the migration and the statement that failed (the
    ///   setup's transaction changes nothing).
    static func run(of schema: Schema, fresh: Bool, on connection: PostgresConnection) throws {
        for migration in schema.migrations {
            for (index, statement) in migration.server.enumerated() {
                let key = "server_sql:\(migration.id):\(index + 1)"
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
