import CSQLite
import Foundation

/// One `sqlite3*` handle. Confined: callers serialize access (see ``ConnectionLease``).
/// Not Sendable.
///
/// Related SQLite documentation: https://www.sqlite.org/c3ref/sqlite3.html
final class Connection {
    let handle: OpaquePointer
    let path: String
    /// What the layer that owns the file's tables says of them (see ``ConnectionRules``).
    let rules: (any ConnectionRules)?
    /// Prepared statements, one cache for Tandem's own SQL and one for the user's: the
    /// authorizer judges a statement when it is prepared, so a user's SQL must never be served a
    /// statement prepared as Tandem's (see ``runsUserSQL``).
    private var caches = (own: StatementCache(), user: StatementCache())
    private var cache: StatementCache {
        get { runsUserSQL ? caches.user : caches.own }
        _modify {
            if runsUserSQL { yield &caches.user } else { yield &caches.own }
        }
    }
    /// Values the layers above keep with this connection (see ``ConnectionAttachmentKey``).
    var attachments: [ObjectIdentifier: Any] = [:]
    /// Row changes the preupdate hook saw in data tables (the rows behind the views), a delete
    /// left out while ``replacesRows`` (see ``RowCount``).
    private(set) var dataTableRowChanges = 0
    /// Entries the preupdate hook saw inserted into the upload queue (see ``RowCount``).
    private(set) var queuedEntries = 0
    /// Set while a statement that inserts runs: a delete in a data table is then the old row an
    /// `INSERT OR REPLACE` replaced, not a row of its own.
    var replacesRows = false
    /// While non-nil, the rows the user's statements changed (see ``executeScript(_:arguments:results:rows:)``).
    var rowCount: RowCount?
    /// Tandem's transaction statements (see ``control(_:)``).
    var controlStatements: [Control: Statement] = [:]
    /// Tables changed since the last ``takeChangedTables()`` (filled by the update hook).
    fileprivate(set) var changedTables: Set<String> = []
    /// Since ``takeChangedTables()``: entries queued, the first one's id, and changes of synced
    /// tables' rows (see ``tablesOfUnexplainedEntries()``).
    private var entriesInTransaction = 0
    private var firstQueuedRowid: Int64?
    private var syncedRowChanges = 0
    private var updateHookInstalled = false
    /// While set, statements prepared on this connection may not begin, commit or roll back a
    /// transaction (the caller owns the transaction; savepoints stay allowed).
    var forbidsTransactionControl = false
    /// While set, the connection is inside ``readTransaction(_:)``: any write is refused as one.
    var inReadTransaction = false
    /// While set, the statements prepared and run are the user's (see ``asUser(_:)``): the
    /// authorizer refuses their writes and schema changes to Tandem's own tables.
    private(set) var runsUserSQL = false
    /// What the authorizer last refused, for the error that follows (see ``explainRefusal(_:sql:)``).
    var refusal: AuthorizerRefusal?
    /// While non-nil, the authorizer collects the tables statements read.
    var readTables: Set<String>?
    /// The table the statement being prepared inserts into, updates or deletes from itself (not
    /// through a trigger), as the authorizer saw it (see ``Statement/writeTarget``).
    var preparedWriteTarget: Statement.WriteTarget?
    /// The savepoint statement being prepared, as the authorizer saw it (see ``Statement/savepoint``).
    var preparedSavepoint: Statement.Savepoint?
    /// While non-nil, the rowids of the rows inserted into `table` (by any statement, triggers
    /// included), in order (see ``capturingInserts(into:_:)``).
    private var capture: (table: String, rowids: [Int64])?

    /// Frames in the WAL after this connection's last commit, from the WAL hook (see
    /// ``deferCheckpoints()``); 0 until then.
    var walFrames: Int32 = 0
    /// The tables the preupdate hook saw since `changedTables` was last taken (up to four), as
    /// SQLite passed their names, and whether they hold user rows: a change to one of them (a
    /// bulk insert, a view's trigger writing its three tables) then costs a pointer and a string
    /// comparison instead of a String and a set insertion.
    private var recentlyChanged: [(name: UnsafePointer<CChar>, copy: UnsafeMutablePointer<CChar>, kind: ChangedTableKind)] = []

    /// SQLite's process-wide configuration, set before the first connection opens: memory
    /// statistics off (Tandem reads none; their upkeep takes a mutex on every allocation). A
    /// program that used SQLite before keeps its configuration.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/c_config_covering_index_scan.html#sqliteconfigmemstatus
    private static let configured: Void = { _ = tandem_sqlite_disable_memory_statistics() }()

    /// Opens a handle. The busy timeout is set before anything else runs.
    /// - Throws: ``TandemError/cannotOpen`` naming the path.
    /// With `immutable`, the file is read as it is on disk: read-only, no locks, no `-wal` or
    /// `-shm` read or created (commits still in a WAL are not seen).
    /// `rules` are what the layer that owns the file's tables says of them (nil: plain SQLite).
    /// With `create` false, a missing file is not created.
    init(
        path: String, readOnly: Bool, busyTimeoutMilliseconds: Int32, immutable: Bool = false, create: Bool = true,
        rules: (any ConnectionRules)?
    ) throws {
        _ = Self.configured
        var db: OpaquePointer?
        var flags =
            (readOnly || immutable ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)))
            | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        var name = path
        if immutable {
            flags |= SQLITE_OPEN_URI
            let escaped = path.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "?", with: "%3f")
                .replacingOccurrences(of: "#", with: "%23")
            name = "file:" + escaped + "?immutable=1"
        }
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            var message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            if let db, let hint = DescriptorLimit.hint(errno: sqlite3_system_errno(db)) { message += " (\(hint))" }
            sqlite3_close_v2(db)
            throw TandemError.cannotOpen(path: path, reason: message)
        }
        self.handle = db
        self.path = path
        self.rules = rules
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        // A database whose tables a layer owns: SQL may not write virtual tables' own tables
        // (FTS5's, behind a search index) or otherwise corrupt the file on purpose.
        // https://www.sqlite.org/c3ref/c_dbconfig_defensive.html
        if rules != nil { _ = tandem_db_config_int(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nil) }
        registerFunctions()
        installAuthorizer()
    }

    /// Runs `body`, which prepares and runs the user's SQL, with Tandem's own tables protected.
    func asUser<T>(_ body: () throws -> T) rethrows -> T {
        let outer = runsUserSQL
        runsUserSQL = true
        defer { runsUserSQL = outer }
        return try body()
    }

    /// Runs `body` with SQLite's defensive flag off: Tandem's own repair of a virtual table whose
    /// own tables another program damaged (``SQLITE_DBCONFIG_DEFENSIVE`` is on otherwise).
    func withoutDefensive<T>(_ body: () throws -> T) rethrows -> T {
        _ = tandem_db_config_int(handle, SQLITE_DBCONFIG_DEFENSIVE, 0, nil)
        defer { _ = tandem_db_config_int(handle, SQLITE_DBCONFIG_DEFENSIVE, 1, nil) }
        return try body()
    }

    /// True once ``close()`` ran.
    private(set) var isClosed = false

    /// Finalizes the statements and closes the handle now; nothing may use the connection
    /// afterwards. The last connection of the last process to close a WAL database checkpoints
    /// it and removes its `-wal` and `-shm` (SQLite's rule), when it may write the file.
    /// With `checkpointing` false, SQLite leaves the WAL as it is (no checkpoint, no removal):
    /// for a file whose path came to name another file, whose sidecars are the new file's.
    func close(checkpointing: Bool = true) {
        guard !isClosed else { return }
        if !checkpointing { _ = tandem_db_config_int(handle, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nil) }
        isClosed = true
        forgetRecentlyChanged()
        caches.own.removeAll()
        caches.user.removeAll()
        controlStatements.removeAll()
        sqlite3_close_v2(handle)
    }

    deinit { close() }

    /// The connection's last error, in the user's terms where the ``rules`` say (Tandem's name
    /// the user's tables and a duplicate id, from the statement's `arguments`).
    func error(_ rc: Int32, sql: String?, arguments: [DatabaseValue] = []) -> SQLiteError {
        let extended = sqlite3_extended_errcode(handle)
        var code = (extended & 0xff) == (rc & 0xff) ? extended : rc
        var message = String(cString: sqlite3_errmsg(handle))
        if let rules, let terms = rules.userTerms(code: code, message: message, sql: sql, arguments: arguments, on: self) {
            (code, message) = terms
        }
        // "unable to open database file" says nothing of why; out of descriptors, say so.
        if [SQLITE_CANTOPEN, SQLITE_IOERR].contains(code & 0xff), let hint = DescriptorLimit.hint(errno: sqlite3_system_errno(handle)) {
            message += " (\(hint))"
        }
        return SQLiteError(extendedCode: code, message: message, sql: sql, path: path, arguments: arguments.isEmpty ? nil : arguments)
    }

    /// A cached prepared statement for one SQL statement. A statement that fails to prepare is not cached.
    func cachedStatement(_ sql: String) throws -> Statement {
        if let s = cache.statement(for: sql) { return s }
        let s = try prepare(sql, persistent: true)
        cache.insert(s, for: sql)
        return s
    }

    /// The statement cache's size and contents, for checks.
    var cachedStatementCount: Int { cache.count }
    func isCached(_ sql: String) -> Bool { cache.contains(sql) }

    /// Runs `body` with the cached statement for `sql`; a statement that fails leaves the cache.
    func withCachedStatement<T>(_ sql: String, _ body: (Statement) throws -> T) throws -> T {
        let statement = try cachedStatement(sql)
        do { return try body(statement) } catch {
            cache.remove(sql)
            throw error
        }
    }

    /// Prepares exactly one statement.
    /// - Throws: ``SQLiteError``; ``TandemError/invalidSQL(sql:reason:)`` for no statement, more
    ///   than one, or transaction control inside a Tandem transaction.
    func prepare(_ sql: String, persistent: Bool = false) throws -> Statement {
        var stmt: OpaquePointer?
        var trailing = false
        refusal = nil
        preparedWriteTarget = nil
        preparedSavepoint = nil
        let rc = sql.withCString { start -> Int32 in
            var tail: UnsafePointer<CChar>?
            let rc = sqlite3_prepare_v3(handle, start, -1, persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0, &stmt, &tail)
            trailing = tail.map { !Connection.onlyCommentsFollow($0, in: handle) } ?? false
            return rc
        }
        guard rc == SQLITE_OK else { throw explainRefusal(error(rc, sql: sql), sql: sql) }
        guard let stmt else {
            throw TandemError.invalidSQL(sql: sql, reason: "it contains no statement")
        }
        let statement = Statement(connection: self, handle: stmt, sql: sql, writeTarget: preparedWriteTarget, savepoint: preparedSavepoint)
        if trailing {
            throw TandemError.invalidSQL(sql: sql, reason: "only one statement is allowed here, but more follow the first")
        }
        return statement
    }

    /// Prepares and runs each `;`-separated statement of `sql` in turn. Arguments are consumed
    /// in order by the statements' parameters. SQL that holds one statement is cached.
    /// - Parameter results: given the rows of each statement that returns rows; without it they
    ///   are stepped through and dropped.
    /// - Parameter rows: runs a statement that returns rows and returns them (by default
    ///   ``Statement/fetchAll(_:)``), for a caller that reads some statements' rows otherwise.
    func executeScript(
        _ sql: String, arguments: [DatabaseValue] = [], results: ((ResultSet) -> Void)? = nil,
        rows: ((Statement, [DatabaseValue]) throws -> [Row])? = nil
    ) throws {
        func perform(_ statement: Statement, _ arguments: [DatabaseValue]) throws {
            let before = (dataTableRowChanges, queuedEntries)
            replacesRows = statement.writeTarget?.action == SQLITE_INSERT
            defer { replacesRows = false }
            if let results, statement.columnCount > 0 {
                let fetched = try rows?(statement, arguments) ?? statement.fetchAll(arguments)
                results(ResultSet(columns: statement.columnNames, rows: fetched))  // the names after the steps (a schema change prepares again)
            } else {
                try statement.run(arguments)
            }
            rowCount?.finished(
                statement, dataTableRows: dataTableRowChanges - before.0, queuedEntries: queuedEntries - before.1,
                changes: Int(sqlite3_changes64(handle)))
        }
        if let statement = cache.statement(for: sql) {  // one lookup per use of a cached statement
            do { try perform(statement, arguments) } catch { cache.remove(sql); throw error }
            return
        }
        var remaining = arguments[...]
        var statements = 0
        try sql.withCString { start in
            var tail: UnsafePointer<CChar>? = start
            while let current = tail, current.pointee != 0 {
                var stmt: OpaquePointer?
                var next: UnsafePointer<CChar>?
                refusal = nil
                preparedWriteTarget = nil
                preparedSavepoint = nil
                let rc = sqlite3_prepare_v3(handle, current, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, &next)
                let text = {
                    Connection.trimmed(
                        next.map { String(decoding: UnsafeRawBufferPointer(start: current, count: $0 - current), as: UTF8.self) }
                            ?? String(cString: current))
                }
                guard rc == SQLITE_OK else {
                    // Quote the failing statement and what follows (the tail stops where parsing failed).
                    let rest = Connection.trimmed(String(cString: current))
                    throw explainRefusal(error(rc, sql: rest), sql: rest)
                }
                tail = next
                guard let stmt else { continue }  // whitespace or comment
                statements += 1
                let whole = statements == 1 && next.map { Connection.isBlank($0) } ?? true
                let statement = Statement(connection: self, handle: stmt, sql: whole ? sql : text(), writeTarget: preparedWriteTarget, savepoint: preparedSavepoint)
                if whole {
                    cache.insert(statement, for: sql)
                    do { try perform(statement, arguments) } catch { cache.remove(sql); throw error }
                    remaining = []
                    return
                }
                let n = statement.parameterCount
                guard remaining.count >= n else {
                    throw TandemError.invalidArguments(
                        "`\(statement.sql)` needs \(n) argument(s) but \(remaining.count) of the \(arguments.count) given remain")
                }
                try perform(statement, Array(remaining.prefix(n)))
                remaining = remaining.dropFirst(n)
            }
        }
        guard remaining.isEmpty else {
            throw TandemError.invalidArguments(
                "\(arguments.count) argument(s) given but the SQL has only \(arguments.count - remaining.count) parameter(s): `\(sql)`")
        }
    }

    private static func trimmed(_ text: String) -> String {
        String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }

    /// True when nothing but white space and comments follows (SQLite prepares those to no statement).
    private static func onlyCommentsFollow(_ pointer: UnsafePointer<CChar>, in handle: OpaquePointer) -> Bool {
        if isBlank(pointer) { return true }
        var stmt: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let rc = sqlite3_prepare_v2(handle, pointer, -1, &stmt, &tail)
        defer { sqlite3_finalize(stmt) }
        return rc == SQLITE_OK && stmt == nil && (tail.map { isBlank($0) } ?? true)
    }

    /// True when only white space follows (comments count as text: SQLite prepares them to no statement).
    private static func isBlank(_ pointer: UnsafePointer<CChar>) -> Bool {
        var p = pointer
        while p.pointee != 0 {
            if !(p.pointee == 32 || (p.pointee >= 9 && p.pointee <= 13)) { return false }
            p += 1
        }
        return true
    }

    func execute(_ sql: String, _ arguments: [DatabaseValue] = []) throws {
        try withCachedStatement(sql) { try $0.run(arguments) }
    }

    func fetchAll(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> [Row] {
        try withCachedStatement(sql) { try $0.fetchAll(arguments) }
    }

    /// Steps through the rows of a cached statement until `body` returns false.
    func forEachRow(_ sql: String, _ arguments: [DatabaseValue] = [], _ body: (Row) throws -> Bool) throws {
        try withCachedStatement(sql) { statement in
            try statement.bind(arguments)
            defer { sqlite3_reset(statement.handle) }
            var names: [String]?
            while try statement.step() {
                let columns = names ?? statement.columnNames  // after the first step (see ``Statement/columnNames``)
                names = columns
                let row = Row(columns: columns, values: (0..<Int32(columns.count)).map(statement.value(at:)))
                if try !body(row) { return }
            }
        }
    }

    func scalar(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> DatabaseValue {
        try withCachedStatement(sql) { try $0.scalar(arguments) }
    }

    func setBusyTimeout(_ milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }
    var totalChanges: Int64 { Int64(sqlite3_total_changes64(handle)) }
    /// Rows the last INSERT, UPDATE or DELETE changed (https://www.sqlite.org/c3ref/changes.html).
    var changes: Int64 { Int64(sqlite3_changes64(handle)) }

    /// Rolls back an open transaction, if any (after an error or a cancelled block).
    func rollbackIfNeeded() {
        if !isAutocommit { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
    }

    // MARK: Change tracking

    /// Starts recording the names of tables whose rows change: SQLite's preupdate hook, which
    /// also sees changes made by triggers and changes to WITHOUT ROWID tables.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/preupdate_blobwrite.html
    func trackChanges() {
        guard !updateHookInstalled else { return }
        updateHookInstalled = true
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_preupdate_hook(
            handle,
            { context, _, operation, _, table, _, newRowid in
                guard let context, let table else { return }
                let connection = Unmanaged<Connection>.fromOpaque(context).takeUnretainedValue()
                if connection.noteChange(of: table, operation: operation) == .queue, operation == SQLITE_INSERT {
                    connection.entriesInTransaction += 1
                    if connection.firstQueuedRowid == nil { connection.firstQueuedRowid = newRowid }
                }
                if connection.capture != nil, operation == SQLITE_INSERT { connection.noteInsert(into: table, rowid: newRowid) }
            }, context)
    }

    /// Runs `body` and returns the rowids of the rows it inserted into `table`, in order (needs
    /// ``trackChanges()``: the writer's connection).
    func capturingInserts(into table: String, _ body: () throws -> Void) throws -> [Int64] {
        capture = (table, [])
        defer { capture = nil }
        try body()
        return capture?.rowids ?? []
    }

    private func noteInsert(into table: UnsafePointer<CChar>, rowid: Int64) {
        guard let name = capture?.table, strcmp(table, name) == 0 else { return }
        capture?.rowids.append(rowid)
    }

    /// The tables of the entries this transaction queued that no change of a synced table's row
    /// explains (each such change queues one entry): an insert-only table's writes reach no data
    /// table, so its entries are what say it changed. Empty, and no query, in the usual case.
    /// Call before ``takeChangedTables()``.
    func tablesOfUnexplainedEntries() throws -> Set<String> {
        guard let first = firstQueuedRowid, entriesInTransaction > syncedRowChanges, let rules else { return [] }
        return try rules.tablesQueued(from: first, on: self)
    }

    @discardableResult
    private func noteChange(of table: UnsafePointer<CChar>, operation: Int32) -> ChangedTableKind? {
        let counts = operation != SQLITE_DELETE || !replacesRows
        // The same pointer may name another table after a schema change frees the first: the
        // copy of the name is compared too.
        var kind: ChangedTableKind?
        for recent in recentlyChanged where recent.name == table && strcmp(recent.copy, table) == 0 {
            kind = recent.kind
            break
        }
        if kind == nil {
            let name = String(cString: table)
            changedTables.insert(name)
            kind = rules?.kind(ofTable: name) ?? .other
            if recentlyChanged.count == 4 { free(recentlyChanged.removeFirst().copy) }
            if let copy = strdup(table), let kind { recentlyChanged.append((table, copy, kind)) }
        }
        switch kind {
        case .data where counts: dataTableRowChanges += 1
        case .syncedData where counts:
            dataTableRowChanges += 1
            syncedRowChanges += 1
        case .queue where operation == SQLITE_INSERT: queuedEntries += 1
        default: break
        }
        return kind
    }

    private func forgetRecentlyChanged() {
        for recent in recentlyChanged { free(recent.copy) }
        recentlyChanged.removeAll(keepingCapacity: true)
    }

    func takeChangedTables() -> Set<String> {
        defer {
            changedTables.removeAll(keepingCapacity: true)
            entriesInTransaction = 0
            syncedRowChanges = 0
            firstQueuedRowid = nil
            forgetRecentlyChanged()
        }
        return changedTables
    }

    // MARK: SQL functions

    private func registerFunctions() {
        // uuid(): a fresh lowercase random (version 4) UUID.
        sqlite3_create_function_v2(
            handle, "uuid", 0, SQLITE_UTF8, nil,
            { context, _, _ in
                let text = UUID().uuidString.lowercased()
                sqlite3_result_text(context, text, -1, tandem_sqlite_transient())
            }, nil, nil, nil)
        SwiftStringFunctions.register(on: handle)
        SwiftValueFunctions.register(on: handle)
    }
}
