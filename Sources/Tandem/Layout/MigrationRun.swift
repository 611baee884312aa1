import Foundation

/// The migrations of one ``MigrationRunner/migrate(to:in:progress:)``, step by step, over the
/// tables as the file declares them at each step (`working`).
///
/// Steps that move or convert values (renames, type changes, drops) rewrite the stored JSON with
/// SQLite's JSON functions: values move as JSON text, byte for byte, so nothing but the names
/// changes. Steps that read the user's SQL over the views (fill, copy, SQL, Swift) first bring
/// the views to `working`. Pending uploads follow renames and type changes; they keep values a
/// drop removes, which are still the server's.
struct MigrationRun {
    let tx: Transaction
    /// The tables as declared after the last step.
    var working: Schema
    /// The schema being installed, which declares the columns and tables steps fill.
    let target: Schema
    /// The views and triggers in the file are `working`'s.
    private var viewsCurrent = true
    /// Column renames not yet written to the stored rows, by table (its name now).
    private var moves: [String: StoredKeyMoves] = [:]
    /// The report's rename steps whose rows are counted when their table's renames are written
    /// (the places in the report's steps, by table), and the rows written since the last count.
    private var renamesToCount: [String: [Int]] = [:]
    private var rewritten: [String: Int] = [:]
    /// The place in the report's steps of the step running.
    private var stepIndex = 0

    init(tx: Transaction, working: Schema, target: Schema) {
        self.tx = tx
        self.working = Schema(tables: working.tables)
        self.target = target
    }

    /// Runs `migration`'s steps; with uploads `none`, withdraws the CRUD entries they queued.
    mutating func apply(_ migration: Migration, into report: inout MigrationReport, progress: ((MigrationReport.Step) -> Void)?) throws {
        let queueBefore = try tx.connection.counter(.crudLast) ?? 0
        for step in migration.steps {
            var done = MigrationReport.Step(migration: migration.id, step: step.description, rowsChanged: 0, uploadsQueued: 0, pendingRewritten: 0, rowsLeavingHost: 0)
            let queuedBefore = try tx.connection.counter(.crudLast) ?? 0
            stepIndex = report.steps.count
            do {
                try apply(step, uploads: migration.uploads, &done)
            } catch let error as TandemError {
                if case .migrationFailed = error { throw error }
                throw TandemError.migrationFailed(migration: migration.id, step: step.description, reason: error.description)
            } catch {
                throw TandemError.migrationFailed(migration: migration.id, step: step.description, reason: "\(error)")
            }
            let queued = Int((try tx.connection.counter(.crudLast) ?? 0) - queuedBefore)
            done.uploadsQueued = migration.uploads == .changes ? queued : 0
            report.steps.append(done)
            countRenames(in: &report)
            progress?(done)
        }
        try writeMoves()
        countRenames(in: &report)
        if migration.uploads == .none {
            try tx.executeOwn("DELETE FROM ps_crud WHERE id > ?", [queueBefore])
        }
    }

    /// Brings the views, triggers and stored schema to `working` (after the last migration).
    mutating func installWorking() throws {
        try SchemaInstaller.install(working, in: tx, force: !viewsCurrent)
        viewsCurrent = true
    }

    // MARK: - Steps

    private mutating func apply(_ step: Migration.Step, uploads: Migration.Uploads, _ done: inout MigrationReport.Step) throws {
        // Renames wait for the table's next fill; every other step reads or writes the rows as they are.
        switch step {
        case .renameColumn: break
        case .fill(let table, _, let value, let condition):
            // The fill reads its own table's rows through a view that knows the renames; any
            // other view it reads (a subquery, its own table's included) reads the rows as written.
            try writeMoves(except: table)
            if Self.names(table, in: value + " " + (condition ?? "")) { try writeMoves(of: table) }
        case .changeType(let table, _, _, _), .dropColumn(let table, _, _), .renameTable(let table, _): try writeMoves(of: table)
        case .dropTable(let table, _):
            moves[table] = nil
            renamesToCount[table] = nil
        case .copyRows, .sql, .swift: try writeMoves()
        }
        switch step {
        case .renameColumn(let tableName, let from, let to):
            let index = try tableIndex(tableName)
            let table = working.tables[index]
            let column = try self.column(from, of: table)
            try Schema.checkIdentifier(to, what: "column '\(tableName).\(to)'", table: tableName, column: to)
            guard !table.columns.contains(where: { $0.name.lowercased() == to.lowercased() }) || to.lowercased() == from.lowercased() else {
                throw TandemError.invalidSchema(SchemaProblem(.duplicate, table: tableName, column: to, "table '\(tableName)' has a column '\(to)' already"))
            }
            try dropViews(of: table)
            let moved = { (json: String) in Self.renamedKey(from: column.name, to: to, in: json) }
            // Counted when the renames are written: the stored rows rewritten (one lacking the
            // column gets a null under its new name).
            renamesToCount[table.name, default: []].append(stepIndex)
            moves[table.name, default: StoredKeyMoves()].rename(column.name, to: to)
            if !table.localOnly { try RenamedColumns.record(table: table.name, from: column.name, to: to, in: tx) }
            try rewriteStaged(of: table.name) {
                moved($0)
            } where: {
                Self.holds($0, column.name, or: to)
            }
            done.pendingRewritten = try rewritePending(of: table.name, where: Self.holds("(data -> '$.data')", column.name)) {
                "json_set(\($0), '$.data', json(\(moved("(\($0) -> '$.data')"))))"
            }
            var renamed = table
            renamed.columns[renamed.columns.firstIndex { $0.name == column.name }!].name = to
            for i in renamed.indexes.indices {
                renamed.indexes[i].columns = renamed.indexes[i].columns.map { $0.lowercased() == column.name.lowercased() ? to : $0 }
            }
            if let searched = renamed.search?.columns { renamed.search?.columns = searched.map { $0 == column.name ? to : $0 } }
            switch renamed.scope {
            case .column(let name) where name == column.name: renamed.scope = .column(to)
            case .parent(let parent, let via) where via == column.name: renamed.scope = .parent(table: parent, via: to)
            default: break
            }
            working.tables[index] = renamed

        case .renameTable(let from, let to):
            let index = try tableIndex(from)
            let table = working.tables[index]
            try Schema.checkIdentifier(to, what: "table '\(to)'", table: from)
            guard working.table(named: to) == nil, working.tables.allSatisfy({ $0.name.lowercased() != to.lowercased() }) else {
                throw TandemError.invalidSchema(SchemaProblem(.duplicate, table: from, "a table '\(to)' is declared already"))
            }
            var renamed = table
            renamed.name = to
            if try tx.scalar("SELECT count(*) FROM sqlite_master WHERE lower(name) IN (lower(?), lower(?))", [to, renamed.dataTableName]).int64Value != 0 {
                throw TandemError.invalidSchema(
                    SchemaProblem(.nameCollision, table: from, "the file holds an object named '\(to)' or the stored rows of an earlier table '\(to)'; drop that first"))
            }
            try dropViews(of: table)
            try tx.executeOwn("PRAGMA legacy_alter_table = ON")
            defer { try? tx.executeOwn("PRAGMA legacy_alter_table = OFF") }
            try tx.executeOwn("ALTER TABLE \(table.quotedDataTable) RENAME TO \(renamed.quotedDataTable)")
            done.rowsChanged = Int(try tx.scalar("SELECT count(*) FROM \(renamed.quotedDataTable)").int64Value ?? 0)
            for staged in [InternalTables.untyped, InternalTables.download] {
                try tx.executeOwn("UPDATE \(staged) SET type = ? WHERE type = ?", [to, from])
            }
            done.pendingRewritten = try rewritePending(of: from, where: "1") { "json_set(\($0), '$.type', \(SQLText.literal(to)))" }
            working.tables[index] = renamed
            try RenamedColumns.renameTable(from: from, to: to, in: tx)
            if !table.localOnly { try RenamedTables.record(from: from, to: to, in: tx) }
            try MigrationDrops.renameTable(from: from, to: to, in: tx)
            for i in working.tables.indices {
                if case .parent(let parent, let via) = working.tables[i].scope, parent == from { working.tables[i].scope = .parent(table: to, via: via) }
            }

        case .changeType(let tableName, let columnName, let type, let using):
            let index = try tableIndex(tableName)
            let table = working.tables[index]
            let old = try column(columnName, of: table)
            var retyped = table
            let position = retyped.columns.firstIndex { $0.name == old.name }!
            retyped.columns[position].type = type
            let column = retyped.columns[position]
            if let using {
                try installViewsIfNeeded()
                done.rowsChanged = try MigrationFill.run(using, where: nil, over: table, into: column, of: retyped, queue: false, everyRow: true, in: tx).filled
            } else {
                done.rowsChanged = try MigrationValues.convertStored(column, of: retyped, in: tx)
            }
            done.pendingRewritten = try MigrationValues.convertPending(column, of: retyped, in: tx)
            if case .column(let name) = retyped.scope, name == column.name, type == .real {
                throw TandemError.invalidSchema(
                    SchemaProblem(.invalidScope, table: tableName, column: columnName, "'\(tableName).\(columnName)' scopes the table's rows; a scope column cannot be real"))
            }
            if type != .text { retyped.withoutSearched(column.name) }
            working.tables[index] = retyped
            viewsCurrent = false

        case .fill(let tableName, let columnName, let value, let condition):
            let index = try tableIndex(tableName)
            let table = try declaring(columnName, in: index)
            guard !table.insertOnly else {
                throw TandemError.invalidSchema(SchemaProblem(.invalidTable, table: tableName, "table '\(tableName)' is insert-only: it keeps no rows to fill"))
            }
            try installViewsIfNeeded()
            let column = table.columns.first { $0.name == columnName }!
            let moving = moves.removeValue(forKey: table.name) ?? StoredKeyMoves()
            let written = try MigrationFill.run(
                value, where: condition, over: table, into: column, of: table, moving: moving, queue: uploads == .changes && !table.localOnly, in: tx)
            done.rowsChanged = written.filled
            if !moving.isEmpty { rewritten[table.name] = written.rewritten }

        case .dropColumn(let tableName, let columnName, let discard):
            let index = try tableIndex(tableName)
            let table = working.tables[index]
            let column = try column(columnName, of: table)
            guard discard else {
                throw TandemError.invalidSchema(
                    SchemaProblem(
                        .discardNotConfirmed, table: tableName, column: columnName,
                        "dropping '\(tableName).\(columnName)' removes its values from this host: say so with discardValues: true"))
            }
            try dropViews(of: table)
            let path = SQLText.literal("$." + column.name)
            done.rowsChanged = try changes(
                "UPDATE \(table.quotedDataTable) SET data = json_remove(data, \(path)) WHERE json_valid(data) AND json_type(data, \(path)) IS NOT NULL")
            done.rowsLeavingHost = done.rowsChanged
            if !table.localOnly { try MigrationDrops.record(table: table.name, column: column.name, in: tx) }
            try rewriteStaged(of: table.name) {
                "json_remove(\($0), \(path))"
            } where: {
                "json_type(\($0), \(path)) IS NOT NULL"
            }
            var dropped = table
            dropped.columns.removeAll { $0.name == column.name }
            dropped.indexes.removeAll { index in index.columns.contains { $0.lowercased() == column.name.lowercased() } }
            dropped.withoutSearched(column.name)
            switch dropped.scope {
            case .column(let name) where name == column.name: dropped.scope = nil
            case .parent(_, let via) where via == column.name: dropped.scope = nil
            default: break
            }
            guard !dropped.columns.isEmpty else {
                throw TandemError.invalidSchema(
                    SchemaProblem(.invalidTable, table: tableName, column: columnName, "'\(columnName)' is the last column of '\(tableName)'; drop the table instead"))
            }
            working.tables[index] = dropped

        case .dropTable(let tableName, let discard):
            let index = try tableIndex(tableName)
            let table = working.tables[index]
            guard discard else {
                throw TandemError.invalidSchema(
                    SchemaProblem(.discardNotConfirmed, table: tableName, "dropping table '\(tableName)' removes its rows from this host: say so with discardRows: true"))
            }
            try dropViews(of: table)
            done.rowsLeavingHost = Int(try tx.scalar("SELECT count(*) FROM \(table.quotedDataTable)").int64Value ?? 0)
            done.rowsChanged = done.rowsLeavingHost
            try tx.executeOwn("DROP TABLE \(table.quotedDataTable)")
            if !table.localOnly { try MigrationDrops.record(table: table.name, in: tx) }
            for staged in [InternalTables.untyped, InternalTables.download] {
                try tx.executeOwn("DELETE FROM \(staged) WHERE type = ?", [table.name])
            }
            working.tables.remove(at: index)
            for i in working.tables.indices {
                if case .parent(let parent, _) = working.tables[i].scope, parent == tableName { working.tables[i].scope = nil }
            }

        case .copyRows(let from, let into, let columns, let condition):
            let source = working.tables[try tableIndex(from)]
            let targetIndex = try tableIndex(into, declaredByTarget: true)
            for name in columns.keys.sorted() { _ = try declaring(name, in: targetIndex) }
            try installViewsIfNeeded()
            let names = columns.keys.sorted()
            let list = (["id"] + names).map(SQLText.identifier).joined(separator: ", ")
            let values = (["id"] + names.map { "(\(columns[$0]!))" }).joined(separator: ", ")
            let filter = condition.map { " WHERE (\($0))" } ?? ""
            done.rowsChanged = try userChanges("INSERT INTO \(SQLText.identifier(into))(\(list)) SELECT \(values) FROM \(source.quotedName)\(filter)")

        case .sql(let sql):
            try installViewsIfNeeded()
            done.rowsChanged = try userChanges(sql)

        case .swift(_, let run):
            try installViewsIfNeeded()
            let before = tx.connection.totalChanges
            try run(tx)
            done.rowsChanged = Int(tx.connection.totalChanges - before)
        }
    }

    // MARK: - Helpers

    /// Sets the rows of the rename steps whose renames were written since the last count.
    private mutating func countRenames(in report: inout MigrationReport) {
        for (table, rows) in rewritten {
            for index in renamesToCount.removeValue(forKey: table) ?? [] { report.steps[index].rowsChanged = rows }
        }
        rewritten.removeAll()
    }

    /// Writes the renames waiting for `table` (every table's when nil; every other one's with
    /// `except`) to its stored rows.
    private mutating func writeMoves(of table: String? = nil, except: String? = nil) throws {
        for (name, pending) in moves where (table == nil || name == table) && name != except {
            moves[name] = nil
            guard !pending.isEmpty, let declared = working.table(named: name) else { continue }
            try tx.executeOwn("UPDATE \(declared.quotedDataTable) SET data = \(pending.applied(to: "data")) WHERE json_valid(data)")
            rewritten[name] = Int(tx.connection.changes)
        }
    }

    private func tableIndex(_ name: String) throws -> Int {
        guard let index = working.tables.firstIndex(where: { $0.name == name }) else {
            let names = working.tables.map(\.name).joined(separator: ", ")
            throw TandemError.invalidSchema(
                SchemaProblem(.unknownTable, table: name, "no table '\(name)' is declared at this step (declared: \(names.isEmpty ? "none" : names))"))
        }
        return index
    }

    /// `name`'s index in `working`, adding it as the target declares it when it is new there.
    private mutating func tableIndex(_ name: String, declaredByTarget: Bool) throws -> Int {
        if let index = working.tables.firstIndex(where: { $0.name == name }) { return index }
        guard let declared = target.table(named: name) else {
            throw TandemError.invalidSchema(SchemaProblem(.unknownTable, table: name, "no table '\(name)' is declared at this step or by the schema"))
        }
        working.tables.append(declared)
        viewsCurrent = false
        return working.tables.count - 1
    }

    private func column(_ name: String, of table: TableSchema) throws -> ColumnSchema {
        guard let column = table.columns.first(where: { $0.name == name }) else {
            throw TandemError.invalidSchema(
                SchemaProblem(
                    .unknownColumn, table: table.name, column: name,
                    "table '\(table.name)' has no column '\(name)' at this step (columns: \(table.columns.map(\.name).joined(separator: ", ")))"))
        }
        return column
    }

    /// The table at `index`, with `column` added as the target declares it when it is new.
    private mutating func declaring(_ column: String, in index: Int) throws -> TableSchema {
        if working.tables[index].columns.contains(where: { $0.name == column }) { return working.tables[index] }
        guard let declared = target.table(named: working.tables[index].name)?.columns.first(where: { $0.name == column }) else {
            throw TandemError.invalidSchema(
                SchemaProblem(
                    .unknownColumn, table: working.tables[index].name, column: column,
                    "table '\(working.tables[index].name)' declares no column '\(column)', at this step or in the schema"))
        }
        working.tables[index].columns.append(declared)
        viewsCurrent = false
        return working.tables[index]
    }

    private mutating func installViewsIfNeeded() throws {
        guard !viewsCurrent else { return }
        try working.validate()
        try SchemaInstaller.install(working, in: tx, force: true)
        viewsCurrent = true
    }

    private mutating func dropViews(of table: TableSchema) throws {
        try SchemaInstaller.dropObjects(of: table, in: tx)
        viewsCurrent = false
    }

    /// Runs Tandem's own statement and returns the rows it changed.
    private func changes(_ sql: String, _ arguments: [any DatabaseValueConvertible] = []) throws -> Int {
        try tx.executeOwn(sql, arguments)
        return Int(try tx.scalar("SELECT changes()").int64Value ?? 0)
    }

    /// Runs the user's SQL and returns the rows it changed through the views.
    private func userChanges(_ sql: String) throws -> Int {
        Int(try tx.run(sql).rowsChanged)
    }

    /// Rewrites the rows of `table` waiting in Tandem's staging tables (downloaded rows kept
    /// aside, a large download not yet applied).
    private func rewriteStaged(of table: String, _ rewrite: (String) -> String, where condition: (String) -> String) throws {
        for staged in [InternalTables.untyped, InternalTables.download] {
            try tx.executeOwn("UPDATE \(staged) SET data = \(rewrite("data")) WHERE type = ? AND json_valid(data) AND \(condition("data"))", [table])
        }
    }

    /// Rewrites the pending uploads (queued and set aside) of `table` that match `condition`
    /// (over `data`, the CRUD entry); returns how many.
    private func rewritePending(of table: String, where condition: String, _ rewrite: (String) -> String) throws -> Int {
        var count = 0
        for queue in [InternalTables.crud, InternalTables.rejected] {
            guard try tx.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [queue]).int64Value == 1 else { continue }
            count += try changes("UPDATE \(queue) SET data = \(rewrite("data")) WHERE json_valid(data) AND data ->> '$.type' = ? AND (\(condition))", [table])
        }
        return count
    }

    /// `json` (an SQL expression of a row's JSON object) with the key `from` renamed `to`, its
    /// value moved as JSON text; a stale `to` (a column dropped earlier kept its values) is
    /// removed where `from` is absent.
    private static func renamedKey(from: String, to: String, in json: String) -> String {
        let old = SQLText.literal("$." + from), new = SQLText.literal("$." + to)
        // `->` gives the value's JSON text with JSON's subtype, which json_set takes as JSON.
        return "(CASE WHEN \(json) -> \(old) IS NULL THEN json_remove(\(json), \(new)) "
            + "ELSE json_set(json_remove(\(json), \(old)), \(new), \(json) -> \(old)) END)"
    }

    /// True when the SQL `text` holds `name` as a word (an identifier, quoted or not).
    private static func names(_ name: String, in text: String) -> Bool {
        let word = { (c: Character) in c.isLetter || c.isNumber || c == "_" }
        var rest = Substring(text.lowercased())
        let name = name.lowercased()
        while let found = rest.range(of: name) {
            let before = found.lowerBound == rest.startIndex ? nil : rest[rest.index(before: found.lowerBound)]
            let after = found.upperBound == rest.endIndex ? nil : rest[found.upperBound]
            if !(before.map(word) ?? false) && !(after.map(word) ?? false) { return true }
            rest = rest[found.upperBound...]
        }
        return false
    }

    /// True when the JSON object `json` has the key `key` (or `other`).
    private static func holds(_ json: String, _ key: String, or other: String? = nil) -> String {
        let first = "json_type(\(json), \(SQLText.literal("$." + key))) IS NOT NULL"
        guard let other else { return first }
        return "(\(first) OR json_type(\(json), \(SQLText.literal("$." + other))) IS NOT NULL)"
    }
}
