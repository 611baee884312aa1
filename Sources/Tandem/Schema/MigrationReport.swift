import Foundation

/// What migrating a file did, or would do (a dry run rolls the same work back): each step of
/// each migration that ran, with the rows it touched.
public struct MigrationReport: Sendable, Equatable, CustomStringConvertible {
    /// One step as it ran.
    public struct Step: Sendable, Equatable {
        /// The migration's id.
        public var migration: String
        /// The step in words (``Migration/Step/description``).
        public var step: String
        /// Stored rows the step wrote (renamed, converted, filled, copied, removed).
        public var rowsChanged: Int
        /// CRUD entries the step queued for upload (none in a migration whose uploads are `none`).
        public var uploadsQueued: Int
        /// Pending uploads (queued or set aside) rewritten to the new names or types.
        public var pendingRewritten: Int
        /// Rows or values that leave this host (``Migration/Step/dropColumn(table:column:discardValues:)``,
        /// ``Migration/Step/dropTable(table:discardRows:)``).
        public var rowsLeavingHost: Int
    }

    /// The file's schema version before: how many migrations it had applied.
    public var fromVersion: Int
    /// The version after: the declared list's length.
    public var toVersion: Int
    /// The migrations that ran, in order (a new file records the declared list without running it).
    public var ran: [String]
    /// The steps, in the order they ran.
    public var steps: [Step]
    /// What installing the declared tables adds after the steps: `notes: new column slug`, `tags:
    /// new table` (new columns read NULL until written).
    public var additions: [String] = []

    /// A report of a file at `fromVersion` brought to `toVersion`.
    public init(fromVersion: Int, toVersion: Int, ran: [String] = [], steps: [Step] = []) {
        self.fromVersion = fromVersion
        self.toVersion = toVersion
        self.ran = ran
        self.steps = steps
    }

    /// One line per step: `rename-title: rename column notes.title to heading: 1000 rows, 2 pending uploads rewritten`.
    public var description: String {
        guard !steps.isEmpty || !ran.isEmpty || !additions.isEmpty else { return "schema version \(fromVersion): nothing to migrate" }
        var lines = ["schema version \(fromVersion) → \(toVersion)"]
        for step in steps {
            var parts = ["\(step.rowsChanged) row\(step.rowsChanged == 1 ? "" : "s") written"]
            if step.uploadsQueued > 0 { parts.append("\(step.uploadsQueued) change\(step.uploadsQueued == 1 ? "" : "s") queued for upload") }
            if step.pendingRewritten > 0 { parts.append("\(step.pendingRewritten) pending upload\(step.pendingRewritten == 1 ? "" : "s") rewritten") }
            if step.rowsLeavingHost > 0 { parts.append("\(step.rowsLeavingHost) row\(step.rowsLeavingHost == 1 ? "" : "s") leave this host") }
            lines.append("  \(step.migration): \(step.step): \(parts.joined(separator: ", "))")
        }
        for addition in additions { lines.append("  then \(addition)") }
        return lines.joined(separator: "\n")
    }
}

/// A migration the file has applied, as ``SharedDatabase/migrationHistory()`` lists it.
public struct AppliedMigration: Sendable, Equatable {
    /// Its place in the list, from 1: the schema version it brought the file to.
    public var version: Int
    /// The migration's id.
    public var id: String
    /// When it was applied (or recorded, on a new file).
    public var appliedAt: Date
    /// Whether its row changes uploaded.
    public var uploads: Migration.Uploads
    /// False when the file was made at a later declaration and the migration was recorded
    /// without running (it had nothing to change).
    public var ran: Bool
}
