import Foundation
import Tandem

/// The server's side of migrations whose row changes each host computes (uploads `none`: a
/// backfill, a split): the statements a migration gives for the server (``Migration/server``),
/// run once, in order, after the tables have their columns, so that the server holds what every
/// host computes. Their row changes are logged like any write and download to every host: to one
/// that migrated they are the values it wrote itself, to one of the older release columns it
/// keeps for when it migrates. Each run is recorded in `tandem_meta`
/// (`server_sql:<migration id>:<statement>`).
enum PostgresFills {
    /// Runs the server statements of every migration that have not run on this server.
    /// - Throws: ``PostgresError`` naming the migration and the statement that failed (the
    ///   setup's transaction changes nothing).
    static func run(of schema: Schema, on connection: PostgresConnection) throws {
        for migration in schema.migrations {
            for (index, statement) in migration.server.enumerated() {
                let key = "server_sql:\(migration.id):\(index)"
                guard try connection.execute("SELECT 1 FROM tandem_meta WHERE key = $1", [key]).isEmpty else { continue }
                do {
                    try connection.execute(statement, preparing: false)
                } catch {
                    throw PostgresError("migration '\(migration.id)': its server statement \(index + 1) (\(statement)) failed: \(error)")
                }
                try connection.execute("INSERT INTO tandem_meta(key, value) VALUES ($1, $2)", [key, statement])
            }
        }
    }
}
