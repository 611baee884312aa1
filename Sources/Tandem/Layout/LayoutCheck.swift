import Foundation

/// Checks Tandem's layout in a database file against the schema stored in it, and repairs what
/// can be repaired without losing anything.
///
/// Checked: Tandem's own tables (``ownTables``) and their columns; the counters in `ps_state`
/// (`next_tx` never below a queued transaction id, `seq` never below a change stamp nor
/// negative); the stored schema; and for each declared table its data table's columns, its
/// view, its three INSTEAD OF triggers and its declared indexes.
enum LayoutCheck {
    /// Every table Tandem makes in a database file, with its label, columns and whether every
    /// Tandem database has it (`ps_crud_rejected` is made when the first upload is set aside).
    /// A table Tandem creates must be listed here, or `tandem check` would call it another
    /// program's (`InternalTablesTests` holds every `CREATE TABLE` of the sources to this list).
    static let ownTables: [(name: String, label: String, shape: [String], columns: String, required: Bool)] = [
        (InternalTables.keyValue, "Tandem's key-value table (ps_kv)", ["key/TEXT/1", "value/ANY/0"], "key TEXT PRIMARY KEY, value ANY", true),
        (
            InternalTables.crud, "Tandem's upload queue (ps_crud)", ["id/INTEGER/1", "tx_id/INTEGER/0", "data/TEXT/0"],
            "id INTEGER PRIMARY KEY, tx_id INTEGER, data TEXT", true
        ),
        (InternalTables.state, "Tandem's counters (ps_state)", ["key/TEXT/1", "value/INTEGER/0"], "key TEXT PRIMARY KEY, value INTEGER", true),
        (
            InternalTables.untyped, "Tandem's table of rows of undeclared tables (ps_untyped)", ["type/TEXT/1", "id/TEXT/2", "data/TEXT/0"],
            "type TEXT, id TEXT, data TEXT, PRIMARY KEY(type, id)", true
        ),
        (
            InternalTables.download, "Tandem's staging table for large downloads (ps_download)",
            ["seq/INTEGER/1", "op/TEXT/0", "type/TEXT/0", "id/TEXT/0", "data/TEXT/0"], "seq INTEGER PRIMARY KEY, op TEXT, type TEXT, id TEXT, data TEXT", true
        ),
        (
            InternalTables.rejected, "Tandem's table of set-aside uploads (ps_crud_rejected)",
            ["id/INTEGER/1", "tx_id/INTEGER/0", "data/TEXT/0", "error/TEXT/0", "rejected_at/REAL/0"],
            "id INTEGER PRIMARY KEY, tx_id INTEGER, data TEXT, error TEXT, rejected_at REAL", false
        ),
        (
            InternalTables.migrations, "Tandem's record of applied migrations (ps_migrations)",
            ["version/INTEGER/1", "id/TEXT/0", "applied_at/REAL/0", "uploads/TEXT/0", "ran/INTEGER/0", "readable_by_older/INTEGER/0"],
            "version INTEGER PRIMARY KEY, id TEXT, applied_at REAL, uploads TEXT, ran INTEGER, readable_by_older INTEGER", false
        ),
        // A temporary table (never in the file) while a migration fills a column.
        (MigrationValues.table, "Tandem's values of a migration in progress (ps_migration_values)", ["id/TEXT/1", "v//0"], "id TEXT PRIMARY KEY, v", false),
    ]

    /// Everything wrong with the layout, in the order found. Reads only. `declared`: the schema
    /// the file is about to be opened with, which takes the place of a stored schema that is missing.
    static func findings(in tx: Transaction, declared: Schema? = nil) throws -> [LayoutFinding] {
        guard try holdsTandemTables(in: tx) else {
            return [LayoutFinding("it is not a Tandem database: none of Tandem's tables is in it (\(Remedy.storeSchema.apiTerms) makes them)", remedy: .storeSchema)]
        }
        var found: [LayoutFinding] = []
        var sound: Set<String> = []
        for own in ownTables {
            guard let type = try objectType(own.name, in: tx) else {
                if !own.required { continue }
                found.append(
                    LayoutFinding(
                        "\(own.label) is missing", repair: "\(own.label) was missing; created it empty",
                        action: .createInternalTables))
                continue
            }
            let shape = type == "table" ? try SchemaInstaller.columnShape(of: own.name, in: tx) : []
            if shape == own.shape {
                sound.insert(own.name)
            } else {
                found.append(
                    LayoutFinding(
                        type == "table"
                            ? "\(own.label) has the wrong columns (expected \(own.columns); found \(SchemaInstaller.describe(shape)))"
                            : "\(own.label) is a \(type), not a table"))
            }
        }
        if sound.isSuperset(of: ["ps_crud", "ps_state"]) { found += try counterFindings(in: tx) }
        if sound.isSuperset(of: ["ps_kv", "ps_crud"]) { found += try bookkeepingFindings(in: tx) }

        let schema: Schema
        do {
            if let stored = try SchemaInstaller.storedSchema(tx) {
                schema = stored
            } else if let declared {
                found.append(
                    LayoutFinding(
                        "no Tandem schema is stored in it", repair: "no Tandem schema was stored in it; stored the one given",
                        action: .storeSchema))
                schema = declared
            } else {
                found.append(LayoutFinding("no Tandem schema is stored in it (store one with \(Remedy.storeSchema.apiTerms))", remedy: .storeSchema))
                return found
            }
        } catch {
            found.append(LayoutFinding("the stored schema cannot be read: \(error)"))
            return found
        }
        let current = try SchemaInstaller.layoutIsCurrent(tx)
        if try tx.stored(.layout) == .null {
            found.append(
                LayoutFinding(
                    "Tandem's record of its views' version is missing",
                    repair: "Tandem's record of its views' version was missing; regenerated the views and triggers", action: .upgradeLayout))
        } else if !current {
            found.append(
                LayoutFinding(
                    "the views and triggers were made by an older Tandem",
                    repair: "the views and triggers were made by an older Tandem; regenerated them", action: .upgradeLayout))
        }
        for table in schema.tables { found += try tableFindings(table, compareSQL: current, in: tx) }
        return found
    }

    /// True when any of Tandem's own tables is in the file.
    static func holdsTandemTables(in tx: Transaction) throws -> Bool {
        try tx.scalar("SELECT count(*) FROM sqlite_master WHERE name IN ('ps_kv', 'ps_crud', 'ps_state', 'ps_untyped')").int64Value ?? 0 > 0
    }

    private static func counterFindings(in tx: Transaction) throws -> [LayoutFinding] {
        var found: [LayoutFinding] = []
        let newestEntry = try tx.scalar("SELECT max(id) FROM ps_crud").int64Value ?? 0
        let idLabel = "Tandem's upload queue id counter (crud_last)"
        if let last = try tx.connection.counter(.crudLast) {
            if last < newestEntry {
                found.append(
                    LayoutFinding(
                        "\(idLabel) is \(last), below entry \(newestEntry) in the upload queue",
                        repair: "\(idLabel) was \(last), below entry \(newestEntry) in the upload queue; set it to \(newestEntry)",
                        action: .counters))
            }
        } else {
            found.append(LayoutFinding("\(idLabel) is missing", repair: "\(idLabel) was missing; set it to \(newestEntry)", action: .counters))
        }
        let newestTransaction = try tx.scalar("SELECT max(tx_id) FROM ps_crud").int64Value
        let safeNext = (newestTransaction ?? 0) + 1
        let label = "Tandem's transaction counter (next_tx)"
        if let next = try tx.connection.counter(.nextTransaction) {
            // next_tx equal to the newest queued id is an open transaction (sealed before upload).
            if let newest = newestTransaction, next < newest {
                found.append(
                    LayoutFinding(
                        "\(label) is \(next), below transaction \(newest) in the upload queue",
                        repair: "\(label) was \(next), below transaction \(newest) in the upload queue; set it to \(safeNext)",
                        action: .counters))
            } else if next < 1 {
                found.append(LayoutFinding("\(label) is \(next), below 1", repair: "\(label) was \(next); set it to 1", action: .counters))
            }
        } else {
            found.append(LayoutFinding("\(label) is missing", repair: "\(label) was missing; set it to \(safeNext)", action: .counters))
        }
        if let back = try UploadQueueRows.firstEntryGoingBack(in: tx) {
            found.append(
                LayoutFinding(
                    "the upload queue's transaction ids go back at entry \(back.entry) (transaction \(back.transaction) after \(back.before)): its transaction counter was set back, so later transactions may have joined earlier ones",
                    repair: "the upload queue's transaction ids went back at entry \(back.entry); gave the entries from there on ids past \(back.before), in their order",
                    action: .counters))
        }
        let newestStamp = max(0, try tx.scalar("SELECT max(value) FROM ps_state WHERE key LIKE '\(Counter.changedPrefix)%'").int64Value ?? 0)
        let seqLabel = "Tandem's change counter (seq)"
        if let seq = try tx.connection.counter(.sequence) {
            if seq < newestStamp {
                found.append(
                    LayoutFinding(
                        "\(seqLabel) is \(seq), below the newest change stamp \(newestStamp)",
                        repair: "\(seqLabel) was \(seq); set it to \(newestStamp)", action: .counters))
            } else if seq < 0 {
                found.append(LayoutFinding("\(seqLabel) is \(seq), below 0", repair: "\(seqLabel) was \(seq); set it to 0", action: .counters))
            }
        } else {
            found.append(LayoutFinding("\(seqLabel) is missing", repair: "\(seqLabel) was missing; set it to \(newestStamp)", action: .counters))
        }
        return found
    }

    private static func tableFindings(_ table: TableSchema, compareSQL: Bool, in tx: Transaction) throws -> [LayoutFinding] {
        var found: [LayoutFinding] = []
        let name = table.name
        if let problem = try SchemaInstaller.dataTableProblem(table, in: tx) {
            if try objectType(table.dataTableName, in: tx) == nil {
                found.append(
                    LayoutFinding(
                        "the data table of \(name) is missing",
                        repair: "the data table of \(name) was missing; created it empty (its rows were lost)",
                        action: .createDataTable(table: name)))
            } else {
                found.append(LayoutFinding("the data table of \(name) \(problem)"))
            }
        }
        let regenerate = LayoutRepair.regenerate(table: name)
        func check(_ objectName: String, _ label: String, type expectedType: String, sql expected: String) throws {
            guard let object = try tx.fetchOne("SELECT type, sql FROM sqlite_master WHERE lower(name) = lower(?)", [objectName]) else {
                found.append(LayoutFinding("\(label) is missing", repair: "\(label) was missing; regenerated it", action: regenerate))
                return
            }
            let type = object[0].stringValue ?? ""
            guard type == expectedType else {
                found.append(LayoutFinding("\(label) is a \(type) that Tandem did not make; \(foreignObjectRemedy(type: type, name: objectName))"))
                return
            }
            let sql = object[1].stringValue ?? ""
            if compareSQL && sql != expected.replacingOccurrences(of: " IF NOT EXISTS ", with: " ") {
                found.append(
                    LayoutFinding(
                        "\(label) differs from the one the schema makes",
                        repair: "\(label) differed from the one the schema makes; regenerated it", action: regenerate))
            }
        }
        try check(name, "view \(name)", type: "view", sql: table.createView)
        for (kind, sql) in zip(["insert", "update", "delete"], table.createTriggers) {
            try check(InternalTables.trigger(kind, of: name), "the INSTEAD OF \(kind.uppercased()) trigger of view \(name)", type: "trigger", sql: sql)
        }
        for (index, sql) in zip(table.indexes, table.createIndexes) {
            try check(InternalTables.index(index.name, of: name), "index \(index.name) of \(name)", type: "index", sql: sql)
        }
        for (kind, sql) in zip(["insert", "update", "delete"], table.createSearchTriggers) {
            try check(InternalTables.searchTrigger(kind, of: name), "the search index's \(kind.uppercased()) trigger of \(name)", type: "trigger", sql: sql)
        }
        found += try searchFindings(table, in: tx)
        return found
    }

    /// A declared search index that is missing, or whose entries differ from the rows' text
    /// (a write that bypassed its triggers: triggers dropped, its tables written by hand).
    private static func searchFindings(_ table: TableSchema, in tx: Transaction) throws -> [LayoutFinding] {
        guard let create = table.createSearchTable else { return [] }
        let rebuild = LayoutRepair.rebuildSearch(table: table.name)
        let stored = try tx.scalar("SELECT sql FROM sqlite_master WHERE name = ?", [InternalTables.searchTable(of: table.name)]).stringValue
        guard stored == create, try objectType(InternalTables.searchIDs(of: table.name), in: tx) == "table" else {
            return [
                LayoutFinding(
                    "the search index of \(table.name) is missing or not the one the schema declares",
                    repair: "the search index of \(table.name) was missing or not the declared one; made it again from the rows", action: rebuild)
            ]
        }
        let drifted: Int64
        do {
            drifted = try tx.scalar(table.searchDriftCount).int64Value ?? 0
            // A search for a word of the index reads what the count does not (the word lists,
            // the rows' sizes that rank them).
            let text = table.searchedColumns.map { "coalesce(\(SQLText.identifier($0.name)), '')" }.joined(separator: " || ' ' || ")
            let sample = try tx.scalar("SELECT \(text) FROM \(table.quotedSearchTable) WHERE length(\(text)) > 2 LIMIT 1").stringValue ?? ""
            if let word = sample.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).first(where: { $0.count >= 3 }) {
                let index = table.quotedSearchTable
                _ = try tx.fetchAll("SELECT rowid, bm25(\(index)) FROM \(index) WHERE \(index) MATCH ? ORDER BY bm25(\(index)) LIMIT 1", ["\"\(word)\""])
            }
        } catch let error as SQLiteError {
            // FTS5's own tables written by another program (the sqlite3 shell): unreadable.
            return [
                LayoutFinding(
                    "the search index of \(table.name) cannot be read (\(error.message))",
                    repair: "the search index of \(table.name) could not be read; made it again from the rows", action: rebuild)
            ]
        }
        guard drifted > 0 else { return [] }
        return [
            LayoutFinding(
                "the search index of \(table.name) differs from the rows' text in \(drifted) place\(drifted == 1 ? "" : "s")",
                repair: "the search index of \(table.name) differed from the rows' text in \(drifted) place\(drifted == 1 ? "" : "s"); made it again from the rows",
                action: rebuild)
        ]
    }

    /// Repairs the repairable `findings` (none changes a row), in one write transaction.
    static func repair(_ findings: [LayoutFinding], in tx: Transaction) throws {
        let actions = Set(findings.compactMap(\.action))
        guard !actions.isEmpty else { return }
        try tx.executeOwn(InternalTables.ddl)
        try UploadQueueRows.seedLastID(on: tx.connection)
        if actions.contains(.counters) { try UploadQueueRows.renumberWhereIDsGoBack(in: tx) }
        try tx.executeOwn(
            """
            \(InternalTables.counters)
            UPDATE ps_state SET value = (SELECT max(tx_id) + 1 FROM ps_crud)
                WHERE key = 'next_tx' AND value < (SELECT max(tx_id) FROM ps_crud);
            UPDATE ps_state SET value = 1 WHERE key = 'next_tx' AND value < 1;
            UPDATE ps_state SET value = max(0, coalesce((SELECT max(value) FROM ps_state WHERE key LIKE 'changed:%'), 0))
                WHERE key = 'seq' AND value < max(0, coalesce((SELECT max(value) FROM ps_state WHERE key LIKE 'changed:%'), 0));
            UPDATE ps_kv SET value = uuid() WHERE key = 'client_id' AND (typeof(value) <> 'text' OR value = '');
            UPDATE ps_kv SET value = 0 WHERE key = 'epoch' AND typeof(value) <> 'integer';
            """)
        guard let schema = try SchemaInstaller.storedSchema(tx) else { return }
        for table in schema.tables {
            let create = actions.contains(.createDataTable(table: table.name))
            if create { try tx.executeOwn(table.createDataTable) }
            if create || actions.contains(.regenerate(table: table.name)) || actions.contains(.upgradeLayout) {
                try SchemaInstaller.regenerateObjects(of: table, in: tx)
            }
        }
        if actions.contains(.upgradeLayout) {
            try tx.store(.layout, SchemaInstaller.layoutVersion)
        }
        for case .rebuildSearch(let name) in actions {
            if let table = schema.table(named: name) { try SearchIndexInstaller.install(table, rebuild: true, in: tx) }
        }
        for case .convertStoredValues(let name, let column) in actions {
            if let table = schema.table(named: name) { try StoredRowCheck.convert(column, of: table, in: tx) }
        }
    }

    private static func objectType(_ name: String, in tx: Transaction) throws -> String? {
        try tx.scalar("SELECT type FROM sqlite_master WHERE lower(name) = lower(?)", [name]).stringValue
    }
}
