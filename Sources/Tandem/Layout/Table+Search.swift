/// The objects of a table's search index (``SearchIndex``): an FTS5 table of the searched
/// columns' text, a map from row ids to its rowids (the data table's own rowids are not stable:
/// `VACUUM` may renumber a table whose key is not an `INTEGER PRIMARY KEY`), and three
/// triggers on the data table that keep both in every write transaction that changes a row.
///
/// Related SQLite documentation: https://www.sqlite.org/fts5.html
extension TableSchema {
    var quotedSearchTable: String { SQLText.identifier(InternalTables.searchTable(of: name)) }
    var quotedSearchIDs: String { SQLText.identifier(InternalTables.searchIDs(of: name)) }

    /// The searched columns, as declared.
    var searchedColumns: [ColumnSchema] {
        (search?.columns ?? []).compactMap { name in columns.first { $0.name == name } }
    }

    /// Leaves `column` out of the search index (a migration's step dropped it or made it other
    /// than text); no index is left when it was the last searched column.
    mutating func withoutSearched(_ column: String) {
        search?.columns.removeAll { $0 == column }
        if search?.columns.isEmpty == true { search = nil }
    }

    /// The text the index holds of a column: the view's, a NUL as a space (no word holds one,
    /// and FTS5's snippets end the text at it).
    func searchText(_ column: ColumnSchema, from source: String) -> String {
        let path = SQLText.literal("$." + column.name)
        // ``extract(_:from:)``'s way with an escaped NUL, the NUL put back as a space (SQLite's
        // replace() cannot take a NUL: its length as text is 0).
        let spaced = Self.textWithNUL(source, path: path).replacingOccurrences(of: "char(0)", with: "' '")
        return "(CASE WHEN instr(\(source), '\\u0000') = 0 THEN CAST(\(source) ->> \(path) AS TEXT) ELSE CAST(\(spaced) AS TEXT) END)"
    }

    /// `CREATE VIRTUAL TABLE` of the index, nil without one.
    var createSearchTable: String? {
        guard let search else { return nil }
        let names = searchedColumns.map { SQLText.identifier($0.name) }.joined(separator: ", ")
        return "CREATE VIRTUAL TABLE \(quotedSearchTable) USING fts5(\(names), tokenize = \(SQLText.literal(search.tokenizer.option)))"
    }

    var createSearchIDs: String {
        "CREATE TABLE \(quotedSearchIDs)(n INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE)"
    }

    /// Removes `row`'s entry from the index and the map (nothing when it has none).
    private func unindex(_ row: String) -> String {
        "DELETE FROM \(quotedSearchTable) WHERE rowid = (SELECT n FROM \(quotedSearchIDs) WHERE id = \(row).id); DELETE FROM \(quotedSearchIDs) WHERE id = \(row).id;"
    }

    /// Indexes `row` (NEW), after ``unindex(_:)``: an `INSERT OR REPLACE` into the data table
    /// fires no delete trigger for the row it replaces.
    private var indexNew: String {
        let names = searchedColumns.map { SQLText.identifier($0.name) }.joined(separator: ", ")
        let values = searchedColumns.map { searchText($0, from: "NEW.data") }.joined(separator: ", ")
        return unindex("NEW")
            + " INSERT INTO \(quotedSearchIDs)(id) VALUES (NEW.id); INSERT INTO \(quotedSearchTable)(rowid, \(names)) VALUES (last_insert_rowid(), \(values));"
    }

    /// The index's triggers on the data table (none without an index).
    var createSearchTriggers: [String] {
        guard search != nil else { return [] }
        let trigger = { (kind: String) in SQLText.identifier(InternalTables.searchTrigger(kind, of: self.name)) }
        let changed = (["OLD.id IS NOT NEW.id"] + searchedColumns.map { "\(extract($0, from: "OLD.data")) IS NOT \(extract($0, from: "NEW.data"))" })
            .joined(separator: " OR ")
        return [
            "CREATE TRIGGER \(trigger("insert")) AFTER INSERT ON \(quotedDataTable) FOR EACH ROW BEGIN \(indexNew) END",
            "CREATE TRIGGER \(trigger("update")) AFTER UPDATE ON \(quotedDataTable) FOR EACH ROW WHEN \(changed) BEGIN \(unindex("OLD")) \(indexNew) END",
            "CREATE TRIGGER \(trigger("delete")) AFTER DELETE ON \(quotedDataTable) FOR EACH ROW BEGIN \(unindex("OLD")) END",
        ]
    }

    /// Fills an empty index from the stored rows, each under its data table rowid as it is now
    /// (the map keeps it; rows indexed later take new numbers), in one pass over the rows each.
    var populateSearch: [String] {
        let names = searchedColumns.map { SQLText.identifier($0.name) }.joined(separator: ", ")
        let values = searchedColumns.map { searchText($0, from: "data") }.joined(separator: ", ")
        return [
            "INSERT INTO \(quotedSearchIDs)(n, id) SELECT rowid, id FROM \(quotedDataTable)",
            "INSERT INTO \(quotedSearchTable)(rowid, \(names)) SELECT rowid, \(values) FROM \(quotedDataTable)",
        ]
    }

    /// Rows whose entry in the index differs from their stored text, or that have none, and
    /// entries of rows that are gone: a count (an index kept by its triggers has none).
    var searchDriftCount: String {
        let names = searchedColumns.map { SQLText.identifier($0.name) }
        let differs = zip(names, searchedColumns).map { "s.\($0) IS NOT \(searchText($1, from: "d.data"))" }.joined(separator: " OR ")
        return """
            SELECT (SELECT count(*) FROM \(quotedDataTable) AS d LEFT JOIN \(quotedSearchIDs) AS m ON m.id = d.id \
            LEFT JOIN \(quotedSearchTable) AS s ON s.rowid = m.n WHERE s.rowid IS NULL OR \(differs)) \
            + (SELECT count(*) FROM \(quotedSearchIDs) AS m WHERE NOT EXISTS (SELECT 1 FROM \(quotedDataTable) AS d WHERE d.id = m.id)) \
            + (SELECT count(*) FROM \(quotedSearchTable) AS s WHERE NOT EXISTS (SELECT 1 FROM \(quotedSearchIDs) AS m WHERE m.n = s.rowid))
            """
    }
}

/// Brings a table's search index to its declaration, in the installer's transaction.
enum SearchIndexInstaller {
    /// Drops the index's triggers (``SchemaInstaller``'s objects of a table, dropped before they
    /// are made again); the index itself stays while its declaration does.
    static func dropTriggers(of table: TableSchema, in tx: Transaction) throws {
        for kind in ["insert", "update", "delete"] {
            try tx.executeOwn("DROP TRIGGER IF EXISTS \(SQLText.identifier(InternalTables.searchTrigger(kind, of: table.name)))")
        }
    }

    /// Drops the index and its map. An index whose own tables another program damaged (the
    /// `sqlite3` shell: a table dropped, its settings deleted), which FTS5 can no longer open
    /// and so not drop, gets those tables back, empty, first.
    /// - Parameter columns: how many columns the index has (for its content table, if that is
    ///   what went missing).
    static func drop(of table: String, columns: Int = 1, in tx: Transaction) throws {
        let index = InternalTables.searchTable(of: table)
        do {
            try tx.executeOwn("DROP TABLE IF EXISTS \(SQLText.identifier(index))")
        } catch let error as SQLiteError {
            guard error.message.contains("vtable constructor failed") || error.message.contains("fts5") else { throw error }
            try tx.connection.withoutDefensive {
                let shadow = { (suffix: String) in SQLText.identifier(index + suffix) }
                let content = (0..<max(1, columns)).map { "c\($0)" }.joined(separator: ", ")
                try tx.executeOwn(
                    """
                    CREATE TABLE IF NOT EXISTS \(shadow("_data"))(id INTEGER PRIMARY KEY, block BLOB);
                    CREATE TABLE IF NOT EXISTS \(shadow("_idx"))(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;
                    CREATE TABLE IF NOT EXISTS \(shadow("_content"))(id INTEGER PRIMARY KEY, \(content));
                    CREATE TABLE IF NOT EXISTS \(shadow("_docsize"))(id INTEGER PRIMARY KEY, sz BLOB);
                    CREATE TABLE IF NOT EXISTS \(shadow("_config"))(k PRIMARY KEY, v) WITHOUT ROWID;
                    INSERT OR REPLACE INTO \(shadow("_config"))(k, v) VALUES ('version', 4);
                    INSERT OR REPLACE INTO \(shadow("_data"))(id, block) VALUES (1, X''), (10, X'00000000000000');
                    """)
            }
            try tx.executeOwn("DROP TABLE IF EXISTS \(SQLText.identifier(index))")
        }
        try tx.executeOwn("DROP TABLE IF EXISTS \(SQLText.identifier(InternalTables.searchIDs(of: table)))")
    }

    /// Makes the index as `table` declares it: kept when it is there as declared (`rebuild`
    /// false), else made and filled from the stored rows (its triggers are the table's objects,
    /// ``TableSchema/createSearchTriggers``). Without a declaration, any index of the table is
    /// dropped.
    static func install(_ table: TableSchema, rebuild: Bool, in tx: Transaction) throws {
        guard let create = table.createSearchTable else { return try drop(of: table.name, in: tx) }
        let columns = table.searchedColumns.count
        let stored = try tx.scalar("SELECT sql FROM sqlite_master WHERE name = ?", [InternalTables.searchTable(of: table.name)]).stringValue
        let mapped = try tx.scalar("SELECT count(*) FROM sqlite_master WHERE name = ?", [InternalTables.searchIDs(of: table.name)]).int64Value ?? 0
        if rebuild || stored != create || mapped == 0 {
            try drop(of: table.name, columns: columns, in: tx)
            try tx.executeOwn(create)
            try tx.executeOwn(table.createSearchIDs)
            for sql in table.populateSearch { try tx.executeOwn(sql) }
        }
    }
}
