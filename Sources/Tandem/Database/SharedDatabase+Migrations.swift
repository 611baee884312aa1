import Foundation

extension SharedDatabase {
    /// Brings the file to `schema`: runs the migrations it has not applied (``Migration``), in
    /// order, then installs the declared tables, all in one write transaction under the
    /// cross-process write lock. Opening a database with a schema does the same; this is for a
    /// tool that opened the file without one (`schema: nil`) and wants the plan first.
    ///
    /// With `dryRun`, everything runs and is rolled back: the report says what would happen,
    /// row counts included, and the file is left as it was. Without it, this database goes on
    /// with the schema it was opened with (``schema``) but writes at the new version; open the
    /// file again to use the new tables.
    ///
    /// - Parameters:
    ///   - schema: the tables and the full list of migrations.
    ///   - dryRun: run and roll back.
    ///   - progress: told each step once it ran (on the calling thread).
    /// - Returns: what ran, step by step.
    /// - Throws: ``TandemError/invalidSchema(_:)`` for a list that lost or reordered a migration,
    ///   repeats an id, or a step that does not fit the tables;
    ///   ``TandemError/schemaMigrated(path:fileVersion:lastMigration:programVersion:)`` for a
    ///   list shorter than the file's; ``TandemError/migrationFailed(migration:step:reason:)``
    ///   when a step fails (nothing is kept); ``TandemError/readOnly(path:)``.
    @discardableResult
    public func migrate(to schema: Schema, dryRun: Bool = false, progress: ((MigrationReport.Step) -> Void)? = nil) throws -> MigrationReport {
        try schema.validate()
        guard let writer else { throw TandemError.readOnly(path: path) }
        var report: MigrationReport?
        do {
            _ = try writer.write(migrating: true) { tx in
                report = try MigrationRunner.migrate(to: schema, in: tx, progress: progress)
                if dryRun { throw DryRun() }
            }
        } catch is DryRun {}
        if !dryRun { writer.declareSchemaVersion(schema.migrations.count) }
        return report ?? MigrationReport(fromVersion: 0, toVersion: schema.migrations.count)
    }

    /// The migrations the file applied, oldest first, with their dates.
    /// - Throws: what a read throws.
    public func migrationHistory() throws -> [AppliedMigration] {
        try read { try MigrationRunner.history(in: $0) }
    }

    /// The file's schema version: how many migrations it applied.
    /// - Throws: what a read throws.
    public func schemaVersion() throws -> Int {
        try read { try MigrationRunner.appliedIDs(in: $0).count }
    }
}

extension SharedDatabase {
    /// ``TandemError/schemaMigrated(path:fileVersion:lastMigration:programVersion:)`` when another
    /// program migrated the file past the schema this one declared, else nil: what a read that
    /// failed (a live query whose column was renamed) ends with instead of SQLite's message.
    func migratedPastDeclaredSchema() -> TandemError? {
        guard let declared = writer?.declaredSchemaVersion.load(ordering: .relaxed), declared >= 0,
            let (version, last) = try? readers.read({ try MigrationRunner.version(on: $0) }), version > declared
        else { return nil }
        return .schemaMigrated(path: path, fileVersion: version, lastMigration: last, programVersion: declared)
    }
}

/// Rolls a dry run's transaction back.
private struct DryRun: Error {}
