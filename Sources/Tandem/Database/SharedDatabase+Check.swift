import Foundation

/// Checking a database file, and repairing Tandem's layout in it.
extension SharedDatabase {
    /// Checks the file at `path` without changing it, on one read-only connection: SQLite's page
    /// check (`PRAGMA quick_check`, or `PRAGMA integrity_check` with `full`, which also compares
    /// every index with its table) and Tandem's layout against the stored schema (each declared
    /// table's view, INSTEAD OF triggers, data table and indexes; Tandem's own tables and
    /// counters; the stored schema itself).
    ///
    /// ```swift
    /// for finding in try SharedDatabase.check(path: "/var/lib/app/app.db") {
    ///     print(finding, finding.isRepairable ? "(repairable)" : "")
    /// }
    /// ```
    /// - Returns: every problem found; empty when the file is sound.
    /// - Throws: ``TandemError/cannotOpen(path:reason:)`` when the file does not exist, is not an
    ///   SQLite database, or cannot be read at all.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/pragma.html#pragma_quick_check
    public static func check(path: String, full: Bool = false, configuration: Configuration = Configuration()) throws -> [LayoutFinding] {
        let path = try SharedDatabase.resolvedPath(path)
        LockSafeFiles.retain(path)
        defer { LockSafeFiles.release(path) }  // last: after the connections below are closed
        try Opening.prepareFile(path: path, mode: configuration.fileMode, readOnly: true)
        let connection = try Opening.openReader(path: path, configuration: configuration)
        // Closed last, it leaves an idle file idle (no -wal or -shm behind), as the last close does.
        let closer = Opening.closingConnection(path: path, configuration: configuration)
        defer {
            connection.close()
            closer?.close()
        }
        var found: [LayoutFinding] = []
        do {
            let rows = try connection.fetchAll(full ? "PRAGMA integrity_check" : "PRAGMA quick_check")
            let lines = rows.compactMap(\.values.first?.stringValue).flatMap { $0.split(separator: "\n").map(String.init) }
            found += lines.filter { $0 != "ok" && !$0.hasPrefix("*** ") }.map { LayoutFinding("page check: \($0)") }
        } catch let error as SQLiteError where error.code == .corrupt || error.code == .notADatabase {
            found.append(LayoutFinding("page check: \(error.message)"))
        }
        do {
            found += try connection.readTransaction { tx in
                let layout = try LayoutCheck.findings(in: tx)
                guard full, let schema = try SchemaInstaller.storedSchema(tx) else { return layout }
                return try layout + StoredRowCheck.findings(schema, in: tx)
            }
        } catch let error as SQLiteError where error.code == .corrupt || error.code == .notADatabase {
            found.append(LayoutFinding("layout check: \(error.message)"))
        }
        return found
    }

    /// Checks Tandem's layout in the file at `path` as ``check(path:full:configuration:)`` does,
    /// without the page check, on one read-only connection; where the file stores no schema (its
    /// settings were deleted by another program), against `schema`, the one it is about to be
    /// opened with, so that the findings say what opening it with `schema` and
    /// ``repairLayout(storedRows:)`` restore.
    /// - Returns: every problem found; empty when the layout is sound or the file holds none of
    ///   Tandem's tables (a new or a plain SQLite file).
    /// - Throws: ``TandemError/cannotOpen(path:reason:)`` as ``check(path:full:configuration:)`` does.
    public static func checkLayout(path: String, schema: Schema? = nil, configuration: Configuration = Configuration()) throws -> [LayoutFinding] {
        let path = try SharedDatabase.resolvedPath(path)
        LockSafeFiles.retain(path)
        defer { LockSafeFiles.release(path) }  // last: after the connections below are closed
        try Opening.prepareFile(path: path, mode: configuration.fileMode, readOnly: true)
        let connection = try Opening.openReader(path: path, configuration: configuration)
        // Closed last, it leaves an idle file idle (no -wal or -shm behind), as the last close does.
        let closer = Opening.closingConnection(path: path, configuration: configuration)
        defer {
            connection.close()
            closer?.close()
        }
        return try connection.readTransaction { tx in
            guard try LayoutCheck.holdsTandemTables(in: tx) else { return [] }
            return try LayoutCheck.findings(in: tx, declared: schema)
        }
    }

    /// Checks Tandem's layout in this database as ``check(path:full:configuration:)`` does,
    /// without the page check. Reads only.
    /// - Returns: every problem found; empty when the layout is sound.
    public func checkLayout() throws -> [LayoutFinding] {
        try read { try LayoutCheck.findings(in: $0) }
    }

    /// Checks Tandem's layout in this database (as ``checkLayout()`` does) and repairs what can be repaired without losing anything, in one
    /// write transaction: missing views, triggers and indexes are regenerated, missing tables of
    /// Tandem's own are created, missing counters are inserted with safe values (`next_tx` past
    /// every queued transaction, `seq` at the newest change stamp) and counters that went back
    /// are moved forward.
    /// - Returns: the findings repaired; empty when the layout was sound.
    /// - Throws: ``TandemError/damagedLayout(path:problems:)`` naming every problem that cannot be
    ///   repaired safely (a data table with the wrong columns, say); nothing is changed then.
    ///   ``TandemError/readOnly(path:)`` when opened read-only.
    /// - Parameter storedRows: also read every stored row (as `check --full` does) and store the
    ///   values of another type that convert to their column's exactly as the column's own; the
    ///   rows' other problems are left for ``check(path:full:configuration:)`` to name.
    public func repairLayout(storedRows: Bool = false) throws -> [LayoutFinding] {
        try write { tx in
            var findings = try LayoutCheck.findings(in: tx)
            let unrepairable = findings.filter { !$0.isRepairable }
            guard unrepairable.isEmpty else { throw TandemError.damagedLayout(path: path, problems: unrepairable.map(\.problem)) }
            if storedRows, let schema = try SchemaInstaller.storedSchema(tx) {
                findings += try StoredRowCheck.findings(schema, in: tx).filter(\.isRepairable)
            }
            try LayoutCheck.repair(findings, in: tx)
            return findings
        }
    }
}
