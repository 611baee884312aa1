import Foundation

/// Tandem's own tables, created in every database, and the names of the objects Tandem
/// generates for each declared table. Nothing outside `Layout/` spells these names.
enum InternalTables {
    /// `ps_kv(key, value)`: client id, epoch, cursor, sync state, schema, backend binding (``StoredKey``).
    static let keyValue = "ps_kv"
    /// `ps_crud(id, tx_id, data)`: the upload queue, one CRUD entry per row.
    static let crud = "ps_crud"
    /// `ps_state` holds Tandem's counters (``Counter``) in one small WITHOUT ROWID b-tree, so
    /// each commit's bookkeeping writes one page.
    static let state = "ps_state"
    /// `ps_untyped(type, id, data)`: downloaded rows of tables this database does not keep.
    static let untyped = "ps_untyped"
    /// `ps_download(seq, op, type, id, data)`: a large download's changes until all have arrived.
    static let download = "ps_download"
    /// Transactions the backend refused for good, set aside (made at the first one).
    static let rejected = "ps_crud_rejected"
    /// `ps_migrations(version, id, applied_at, uploads, ran, readable_by_older)`: the migrations the file applied,
    /// one row each (made at the first one).
    static let migrations = "ps_migrations"
    static let createMigrations = """
        CREATE TABLE IF NOT EXISTS ps_migrations(version INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, applied_at REAL NOT NULL, uploads TEXT NOT NULL, ran INTEGER NOT NULL,
            readable_by_older INTEGER NOT NULL)
        """

    /// The stamp for a commit whose changed tables are not known: every live query refreshes.
    static let anyTable = "*"

    /// Data tables: `ps_data__<name>`, or `ps_data_local__<name>` for a local-only table.
    static let dataPrefix = "ps_data__"
    static let localDataPrefix = "ps_data_local__"

    static func dataTable(of table: String, localOnly: Bool) -> String {
        (localOnly ? localDataPrefix : dataPrefix) + table
    }

    /// `tables` with the data tables that could hold each one's rows (a live query's read set:
    /// SQLite's authorizer names a view's table, and a commit's change names the data table).
    static func withDataTables(_ tables: Set<String>) -> Set<String> {
        tables.union(tables.flatMap { [dataTable(of: $0, localOnly: false), dataTable(of: $0, localOnly: true)] })
    }

    /// The table a data table stores (`notes` for `ps_data__notes`), or nil for any other name.
    static func declaredTable(ofDataTable name: String) -> String? {
        for prefix in [localDataPrefix, dataPrefix] where name.hasPrefix(prefix) && name.count > prefix.count {
            return String(name.dropFirst(prefix.count))
        }
        return nil
    }

    /// True for a name Tandem reserves (`ps_…`, in any case): its own tables, the data tables,
    /// the views' triggers and the indexes. Called by the authorizer: no allocation.
    static func isInternal(_ name: UnsafePointer<CChar>) -> Bool {
        strncasecmp(name, "ps_", 3) == 0
    }

    /// ``isInternal(_:)`` of a Swift string.
    static func isInternal(_ name: String) -> Bool {
        name.prefix(3).lowercased() == "ps_"
    }

    /// True for the name of one of Tandem's triggers, the only triggers that may write Tandem's
    /// tables: a view's INSTEAD OF trigger (``trigger(_:of:)``) or a search index's
    /// (``searchTrigger(_:of:)``).
    static func isOwnTrigger(_ name: UnsafePointer<CChar>) -> Bool {
        strncmp(name, "ps_view_", 8) == 0 || strncmp(name, "ps_search_", 10) == 0
    }

    /// A table's full-text search index (FTS5), `ps_search__<table>__fts`: FTS5 names its own
    /// tables after it (`…__fts_data`), which no other table's index name can be.
    static func searchTable(of table: String) -> String { "ps_search__\(table)__fts" }

    /// A search index's map from row ids to the index's rowids, `ps_search_ids__<table>`.
    static func searchIDs(of table: String) -> String { "ps_search_ids__\(table)" }

    /// A search index's trigger on the data table: `kind` is insert, update or delete.
    static func searchTrigger(_ kind: String, of table: String) -> String { "ps_search_\(kind)__\(table)" }

    /// True for a table of a search index: the index, FTS5's tables of it, the map.
    static func isSearchObject(_ name: String) -> Bool {
        name.hasPrefix("ps_search__") || name.hasPrefix("ps_search_ids__")
    }

    /// The tables FTS5 keeps for an index (`ps_search__notes__fts_data`, …): written by FTS5's
    /// own statements, which run inside the user's SQL when a write reaches the index, so the
    /// authorizer lets them be; SQL cannot write them itself (Tandem's connections are
    /// defensive: SQLITE_DBCONFIG_DEFENSIVE).
    static func isSearchShadow(_ name: UnsafePointer<CChar>) -> Bool {
        guard strncmp(name, "ps_search__", 11) == 0 else { return false }
        let length = strlen(name)
        for suffix in ["__fts_data", "__fts_idx", "__fts_content", "__fts_docsize", "__fts_config"] where length > 11 + suffix.utf8.count {
            if strcmp(name + length - suffix.utf8.count, suffix) == 0 { return true }
        }
        return false
    }

    /// One of Tandem's objects in the user's terms: `Tandem's upload queue`, `the stored rows of
    /// table notes`.
    static func describe(_ name: String) -> String {
        switch name.lowercased() {
        case keyValue: return "Tandem's own settings (client id, sync cursor, schema)"
        case crud: return "Tandem's upload queue"
        case state: return "Tandem's counters"
        case untyped, download: return "Tandem's store of downloaded rows"
        case rejected: return "Tandem's set-aside uploads (transactions the backend refused)"
        case migrations: return "Tandem's record of the migrations the file applied"
        default:
            let lowered = name.lowercased()
            if let table = declaredTable(ofDataTable: lowered) { return "the stored rows of table \(table)" }
            if lowered.hasPrefix("ps_view_"), let separator = lowered.range(of: "__") {
                return "the view \(name[separator.upperBound...]) and its triggers, which queue its writes for upload,"
            }
            if lowered.hasPrefix("ps_search"), let start = lowered.range(of: "__") {
                let rest = name[start.upperBound...]
                return "the search index of table \(rest.range(of: "__fts").map { rest[..<$0.lowerBound] } ?? rest)"
            }
            if lowered.hasPrefix("ps_index__") { return "a declared index (\(name.dropFirst("ps_index__".count).replacingOccurrences(of: "__", with: ": ")))" }
            return "\(name), a name reserved for Tandem (names beginning with ps_)"
        }
    }

    /// Why the user's SQL may not write `table`, one of Tandem's.
    static func writeRefusal(_ table: String) -> String {
        let what = describe(table)
        switch table.lowercased() {
        case crud: return "\(what) is written by Tandem only: writes to the tables' views queue their changes, and a sync removes them once uploaded"
        case keyValue: return "\(what) are written by Tandem only (change the schema with \(Remedy.storeSchema.apiTerms))"
        default:
            if let name = declaredTable(ofDataTable: table.lowercased()) {
                return "\(what) are written by Tandem only: write them through the view \(name) (INSERT INTO, UPDATE or DELETE FROM \(name)), which queues them for upload"
            }
            return "\(what) \(what.hasSuffix("counters") ? "are" : "is") written by Tandem only"
        }
    }

    /// Why the user's SQL may not create, change or drop `object` (or an object on it).
    static func schemaRefusal(_ object: String) -> String {
        if object == "sqlite_schema" { return "writable_schema would let the statements edit the schema itself, Tandem's views and triggers included" }
        if declaredTable(ofDataTable: object.lowercased()) != nil {
            return "\(describe(object)) belong to Tandem: change the table with \(Remedy.storeSchema.apiTerms)"
        }
        return "\(describe(object)) belongs to Tandem: only Tandem creates, changes or drops its objects and the objects on its tables"
    }

    /// The alias of a related record's table in a predicate's subquery (`ps_related1`): the
    /// reserved prefix keeps it from naming a user's table.
    static func relatedAlias(_ number: Int) -> String { "\"ps_related\(number)\"" }

    /// The INSTEAD OF trigger of a table's view: `kind` is insert, update or delete.
    static func trigger(_ kind: String, of table: String) -> String { "ps_view_\(kind)__\(table)" }

    /// A declared index, created on the data table.
    static func index(_ index: String, of table: String) -> String { "ps_index__\(table)__\(index)" }

    /// A `LIKE … ESCAPE '\'` pattern matching every index of `table`.
    static func indexPattern(of table: String) -> String { "ps\\_index\\_\\_\(table)\\_\\_%" }

    static let ddl = """
        CREATE TABLE IF NOT EXISTS ps_kv(key TEXT PRIMARY KEY NOT NULL, value ANY) STRICT;
        CREATE TABLE IF NOT EXISTS ps_crud(id INTEGER PRIMARY KEY, tx_id INTEGER NOT NULL, data TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS ps_state(key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
        \(counters)
        CREATE TABLE IF NOT EXISTS ps_download(seq INTEGER PRIMARY KEY, op TEXT NOT NULL, type TEXT NOT NULL, id TEXT NOT NULL, data TEXT);
        CREATE TABLE IF NOT EXISTS ps_untyped(type TEXT NOT NULL, id TEXT NOT NULL, data TEXT, PRIMARY KEY(type, id));
        INSERT OR IGNORE INTO ps_kv(key, value) VALUES ('\(StoredKey.clientID.rawValue)', uuid());
        INSERT OR IGNORE INTO ps_kv(key, value) VALUES ('\(StoredKey.epoch.rawValue)', 0);
        """

    /// Inserts missing counters with safe values: `next_tx` past every queued transaction id,
    /// `seq` at the newest change stamp, so neither ever goes back.
    static let counters = """
        INSERT OR IGNORE INTO ps_state(key, value) VALUES
            ('\(Counter.nextTransaction.rawValue)', coalesce((SELECT max(tx_id) FROM ps_crud), 0) + 1),
            ('\(Counter.sequence.rawValue)', max(0, coalesce((SELECT max(value) FROM ps_state WHERE key LIKE '\(Counter.changedPrefix)%'), 0))),
            ('\(Counter.crudLast.rawValue)', coalesce((SELECT max(id) FROM ps_crud), 0));
        """

    /// The id of a new CRUD entry: one past the newest ever queued (``Counter/crudLast``; NULL,
    /// so SQLite picks the next rowid, if the counter is missing).
    ///
    /// `ps_crud` ids never go back, as `AUTOINCREMENT` would guarantee, without its cost:
    /// `AUTOINCREMENT` writes its `sqlite_sequence` row, one more page and WAL frame, on every
    /// insert, while `ps_state` is written by every commit anyway. Reading `ps_crud` itself here
    /// would make SQLite copy each `INSERT … SELECT` through an ephemeral table. (Databases
    /// created with the old `AUTOINCREMENT` table keep it; the counter starts at its
    /// `sqlite_sequence` value.)
    static let nextCrudID = "(SELECT value + 1 FROM ps_state WHERE key = '\(Counter.crudLast.rawValue)')"

    /// Brings ``Counter/crudLast`` up to the queue's highest id: the last statement of every
    /// trigger that queues an entry, and run after every batch of a bulk insert.
    ///
    /// Only as the last statement, and as an UPDATE: SQLite copies an `INSERT … SELECT` through
    /// an ephemeral table when any earlier statement of the same trigger program read its target
    /// table, so reading `ps_crud` before the entry is inserted (or an upsert into `ps_state`
    /// after it was read) makes every queued row dearer (measured: 1.24× and 1.30× slower at 8
    /// writers). A counter left behind is caught up when the layout is installed or upgraded, when
    /// a writer opens the file, and by repair (``UploadQueueRows/seedLastID(on:)``).
    static let recordLastCrudID = """
        UPDATE ps_state SET value = (SELECT max(id) FROM ps_crud) WHERE key = '\(Counter.crudLast.rawValue)' AND value < (SELECT max(id) FROM ps_crud);
        """

    /// ``recordLastCrudID`` that also recreates a missing counter (outside triggers).
    static let seedLastCrudID = """
        INSERT INTO ps_state(key, value) SELECT '\(Counter.crudLast.rawValue)', coalesce(max(id), 0) FROM ps_crud WHERE 1 \
        ON CONFLICT(key) DO UPDATE SET value = excluded.value WHERE excluded.value > ps_state.value;
        """

    /// The transaction id for new CRUD entries, as view triggers read it.
    static let nextTransactionID = "(SELECT value FROM ps_state WHERE key = '\(Counter.nextTransaction.rawValue)')"

    /// A lowercase random UUID (version 4) from SQLite built-ins only, so that writes through
    /// the views from any SQLite client get ids without Tandem's `uuid()` function.
    static let uuidExpression = """
        (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || \
        substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))))
        """
}
