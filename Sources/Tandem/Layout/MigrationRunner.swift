import Foundation

/// Brings a file to a declared schema inside the caller's write transaction: runs the
/// migrations the file has not applied, in order, records each in `ps_migrations`, then installs
/// the declared tables (``SchemaInstaller``). Everything happens in that one transaction, so a
/// migration that throws, or a process killed half way, leaves the file at its version.
///
/// The file's schema version is the number of migrations it applied. A declared list must
/// begin with the applied ids, in order: a shorter list is an older program
/// (``TandemError/schemaMigrated(path:fileVersion:lastMigration:programVersion:)``), another
/// order or a missing id is refused before anything changes.
enum MigrationRunner {
    /// The applied migrations' ids, in the order they were applied (none when the table is missing).
    static func appliedIDs(in tx: Transaction) throws -> [String] {
        guard try hasTable(tx) else { return [] }
        return try tx.fetchAll("SELECT id FROM \(InternalTables.migrations) ORDER BY version").compactMap { $0[0].stringValue }
    }

    /// The file's schema version: how many migrations it applied. One indexed read.
    static func version(on connection: Connection) throws -> (version: Int, last: String) {
        let tx = Transaction(connection: connection, isReadOnly: true)
        guard try hasTable(tx) else { return (0, "") }
        let row = try tx.fetchOne("SELECT version, id FROM \(InternalTables.migrations) ORDER BY version DESC LIMIT 1")
        return (Int(row?[0].int64Value ?? 0), row?[1].stringValue ?? "")
    }

    /// The applied migrations with their dates, oldest first.
    static func history(in tx: Transaction) throws -> [AppliedMigration] {
        guard try hasTable(tx) else { return [] }
        return try tx.fetchAll("SELECT version, id, applied_at, uploads, ran FROM \(InternalTables.migrations) ORDER BY version").map { row in
            AppliedMigration(
                version: Int(row[0].int64Value ?? 0), id: row[1].stringValue ?? "",
                appliedAt: Date(timeIntervalSince1970: row[2].doubleValue ?? 0),
                uploads: Migration.Uploads(rawValue: row[3].stringValue ?? "") ?? .none, ran: row[4].int64Value == 1)
        }
    }

    /// True when every migration the file applied past the first `declared` says a program that
    /// declares only those may read it (``Migration/readableByOlderVersions``).
    static func readable(byProgramDeclaring declared: Int, in tx: Transaction) throws -> Bool {
        guard try hasTable(tx) else { return false }
        return try tx.scalar("SELECT count(*) FROM \(InternalTables.migrations) WHERE version > ? AND readable_by_older = 0", [declared]).int64Value == 0
    }

    /// ``pending(_:applied:path:)`` of the file's applied list, or nil for a file migrated past
    /// `declared` whose newer migrations all let an older program read it.
    static func pendingUnlessReadable(_ declared: [Migration], in tx: Transaction) throws -> ArraySlice<Migration>? {
        do {
            return try pending(declared, applied: try appliedIDs(in: tx), path: tx.connection.path)
        } catch TandemError.schemaMigrated(let path, let file, let last, let program) {
            guard try readable(byProgramDeclaring: program, in: tx) else {
                throw TandemError.schemaMigrated(path: path, fileVersion: file, lastMigration: last, programVersion: program)
            }
            return nil
        }
    }

    /// The declared migrations the file has not applied, after checking the list against the file.
    /// - Throws: ``TandemError/invalidSchema(_:)`` for two migrations with one id, an empty id, or
    ///   a list that does not begin with the applied ids; ``TandemError/schemaMigrated(path:fileVersion:lastMigration:programVersion:)``
    ///   when the file applied more than the list holds.
    static func pending(_ declared: [Migration], applied: [String], path: String) throws -> ArraySlice<Migration> {
        var seen: Set<String> = []
        for migration in declared {
            guard !migration.id.isEmpty else { throw TandemError.invalidSchema(SchemaProblem(.malformed, "a migration has an empty id")) }
            guard seen.insert(migration.id).inserted else {
                throw TandemError.invalidSchema(SchemaProblem(.duplicate, "two migrations have the id '\(migration.id)'"))
            }
        }
        for (index, id) in applied.enumerated() {
            guard index < declared.count else {
                throw TandemError.schemaMigrated(path: path, fileVersion: applied.count, lastMigration: applied.last ?? "", programVersion: declared.count)
            }
            guard declared[index].id == id else {
                let there = declared.firstIndex { $0.id == id }
                throw TandemError.invalidSchema(
                    SchemaProblem(
                        .migrationsRewritten,
                        "the file applied migration '\(id)' as version \(index + 1), but the schema lists '\(declared[index].id)' there"
                            + (there.map { " and '\(id)' as version \($0 + 1)" } ?? " and no longer lists '\(id)'")
                            + ": migrations are only ever appended, never removed or reordered"))
            }
        }
        return declared[applied.count...]
    }

    /// Runs `schema`'s pending migrations and installs its tables. A file without a stored
    /// schema (new) records the declared migrations as applied without running them.
    /// - Parameter progress: told each step once it ran.
    /// - Throws: what ``pending(_:applied:path:)`` throws; ``TandemError/migrationFailed(migration:step:reason:)``
    ///   for a step that fails; what ``SchemaInstaller/install(_:in:)`` throws.
    @discardableResult
    static func migrate(to schema: Schema, in tx: Transaction, progress: ((MigrationReport.Step) -> Void)? = nil) throws -> MigrationReport {
        try tx.executeOwn(InternalTables.ddl)
        let applied = try appliedIDs(in: tx)
        let pending = try pending(schema.migrations, applied: applied, path: tx.connection.path)
        var report = MigrationReport(fromVersion: applied.count, toVersion: schema.migrations.count)
        if !pending.isEmpty {
            try tx.executeOwn(InternalTables.createMigrations)
            if let stored = try SchemaInstaller.storedSchema(tx) {
                // Steps rewrite whole tables: a larger cache writes each page to the WAL once.
                try tx.connection.withPageCache(kib: pageCacheKiB) {
                    var run = MigrationRun(tx: tx, working: stored, target: schema)
                    for migration in pending {
                        try run.apply(migration, into: &report, progress: progress)
                        try record(migration, ran: true, in: tx)
                        report.ran.append(migration.id)
                    }
                    try run.installWorking()
                }
            } else {
                for migration in pending {
                    try record(migration, ran: false, in: tx)
                    // Rows downloaded from a server that has not renamed a column come under its old name.
                    for step in migration.steps {
                        if case .renameColumn(let table, let from, let to) = step { try RenamedColumns.record(table: table, from: from, to: to, in: tx) }
                        if case .dropColumn(let table, let column, _) = step { try MigrationDrops.record(table: table, column: column, in: tx) }
                        if case .dropTable(let table, _) = step { try MigrationDrops.record(table: table, in: tx) }
                        if case .renameTable(let from, let to) = step {
                            try RenamedTables.record(from: from, to: to, in: tx)
                            try RenamedColumns.renameTable(from: from, to: to, in: tx)
                            try MigrationDrops.renameTable(from: from, to: to, in: tx)
                        }
                    }
                }
            }
        }
        if let before = try SchemaInstaller.storedSchema(tx) {
            for table in schema.tables {
                guard let old = before.table(named: table.name) else {
                    report.additions.append("\(table.name): new table")
                    continue
                }
                for column in table.columns where old.columns.allSatisfy({ $0.name != column.name }) {
                    report.additions.append("\(table.name): new column \(column.name) (\(column.type.rawValue), reads NULL until written)")
                }
            }
        }
        try SchemaInstaller.install(schema, in: tx)
        return report
    }

    /// The page cache of a migration, in KiB, for the main and the temporary database each.
    static let pageCacheKiB = 65536

    private static func record(_ migration: Migration, ran: Bool, in tx: Transaction) throws {
        try tx.executeOwn(
            "INSERT INTO \(InternalTables.migrations)(version, id, applied_at, uploads, ran, readable_by_older) VALUES ((SELECT count(*) + 1 FROM \(InternalTables.migrations)), ?, (julianday('now') - 2440587.5) * 86400.0, ?, ?, ?)",
            [migration.id, migration.uploads.rawValue, ran ? 1 : 0, migration.readableByOlderVersions ? 1 : 0])
    }

    private static func hasTable(_ tx: Transaction) throws -> Bool {
        try tx.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [InternalTables.migrations]).int64Value == 1
    }
}
