import Foundation

/// Writes an import's rows into its table as they are read, inside the import's one write
/// transaction.
///
/// Each row is looked up by id in the table's storage. A new id is inserted through the bulk
/// path (``RowInserter``: the same stored row and PUT entry as the view's INSERT), many rows per
/// statement. A row whose values the stored JSON holds exactly (``StoredRowMatch``) is left alone
/// without asking the view; any other stored row is compared with what the view shows, column by
/// column, and only the columns that differ are updated through the view (one minimal PATCH). The ids go to ``ImportIDs`` for the checks that
/// need them all (an id twice, rows missing from the payload).
final class ImportApplier {
    let table: TableSchema
    private let options: ImportOptions
    private let tx: Transaction
    private let stored: StoredRows
    private let ids: ImportIDs
    private let inserter: RowInserter
    private var match: StoredRowMatch
    /// Insert-only tables keep no rows; a table empty when the import began has none to find.
    private let looksUp: Bool
    private var pending: [[DatabaseValue]] = []
    private var counts = ImportResult.Counts()
    /// Counts of the nested tables.
    private var result = ImportResult()

    init(table: TableSchema, options: ImportOptions, in tx: Transaction) throws {
        self.table = table
        self.options = options
        self.tx = tx
        stored = StoredRows(table: table, connection: tx.connection)
        ids = try ImportIDs()
        inserter = try RowInserter(table: table, columns: ["id"] + table.columns.map(\.name))
        match = StoredRowMatch(table: table)
        // A nested list may write this very table: then rows can appear during the import.
        let empty = try stored.isEmpty()
        looksUp = !table.insertOnly && (!options.nested.isEmpty || !empty)
        pending.reserveCapacity(Self.batch)
    }

    /// Runs `body` with the connection's page cache at ``cacheKiB`` (SQLite's default is 2 MiB),
    /// then sets it back.
    ///
    /// Rows of a payload land all over the table's id index (ids are rarely in order): with the
    /// default cache, nearly every row's index page has left the cache since it was last
    /// touched, so SQLite writes it out to the WAL in the middle of the transaction (and reads it
    /// back) again and again. A larger cache keeps them until the commit writes each once.
    static func withImportCache<T>(on connection: Connection, _ body: () throws -> T) throws -> T {
        let previous = try connection.scalar("PRAGMA cache_size").int64Value ?? -2000
        try connection.execute("PRAGMA cache_size = -\(cacheKiB)")
        defer { try? connection.execute("PRAGMA cache_size = \(previous)") }
        return try body()
    }

    /// The page cache of an import, in KiB.
    static let cacheKiB = 65536

    /// Rows inserted per call of the bulk path.
    private static let batch = 512

    /// Writes the row of the element at `position`.
    func apply(_ row: ImportRow, position: Int) throws {
        try ids.add(row.id, position: position)
        if looksUp {
            let unchanged = try stored.withRow(id: row.id) { found -> Bool? in
                guard case .present(let data) = found else { return nil }
                guard let data else { return false }
                return match.holds(row.values, in: data)
            }
            switch unchanged {
            case true?:
                counts.unchanged += 1
            case false?:
                // Compared as the view shows the row: the view writes the changed columns.
                try flush()
                let current = try tx.fetchAll("SELECT * FROM \(table.quotedName) WHERE id = ?", [row.id])
                if let current = current.first, try ImportPlan.update(row, from: current, of: table, in: tx) { counts.updated += 1 } else { counts.unchanged += 1 }
            case nil:
                try queue(row)
            }
        } else {
            try queue(row)
        }
        if !row.children.isEmpty {
            try flush()
            for plan in row.children { try plan.apply(in: tx, result: &result, deleteMissing: options.deleteMissing) }
        }
    }

    private func queue(_ row: ImportRow) throws {
        var values: [DatabaseValue] = [.text(row.id)]
        values.reserveCapacity(row.values.count + 1)
        for value in row.values { values.append(value ?? .null) }
        pending.append(values)
        counts.inserted += 1
        if pending.count == Self.batch { try flush() }
    }

    /// Writes the queued inserts. A duplicate id among them (or with a row already written by
    /// this import) is named by the element that repeats it.
    func flush() throws {
        guard !pending.isEmpty else { return }
        do {
            _ = try inserter.insert(pending, on: tx.connection)
        } catch let error as SQLiteError where error.code == .constraint {
            if let repeated = try ids.firstRepeat() { throw Self.repeatError(repeated) }
            throw error
        }
        pending.removeAll(keepingCapacity: true)
    }

    private static func repeatError(_ repeated: (id: String, position: Int)) -> TandemError {
        TandemError.invalidPayload("element [\(repeated.position)]: id '\(repeated.id)' appears twice in the payload")
    }

    /// After the last element: the queued inserts, the check that no id came twice, then (with
    /// ``ImportOptions/deleteMissing``) the deletion, through the view, of the stored rows (within
    /// the scope) whose ids the payload did not have.
    func finish() throws -> ImportResult {
        try flush()
        if let repeated = try ids.firstRepeat() { throw Self.repeatError(repeated) }
        if options.deleteMissing {
            var sql = "SELECT id FROM \(table.quotedName)"
            var arguments: [DatabaseValue] = []
            if let scope = options.scope {
                sql += " WHERE \(SQLText.identifier(scope.column)) = ?"
                arguments = [.text(scope.value)]
            }
            let statement = try tx.connection.prepare(sql + " ORDER BY id")
            try statement.bind(arguments)
            _ = try ids.collectMissing(from: statement)
            try ids.forEachMissing { id in
                try tx.execute("DELETE FROM \(table.quotedName) WHERE id = ?", [id])
                counts.deleted += 1
            }
        }
        result.add(counts, for: table.name)
        return result
    }
}
