import CSQLite
import Foundation

/// What the authorizer refused, said in the user's terms by ``Connection/explainRefusal(_:sql:)``.
enum AuthorizerRefusal: Equatable {
    /// BEGIN, COMMIT or ROLLBACK inside a transaction Tandem owns.
    case transactionControl
    /// The user's SQL writes one of Tandem's tables.
    case write(table: String)
    /// The user's SQL creates, changes or drops one of Tandem's objects (or one on its tables).
    case schemaChange(object: String)
    /// A trigger Tandem did not make writes one of Tandem's tables.
    case foreignTrigger(trigger: String, table: String)
    /// The user's SQL sets a pragma that decides how Tandem's connection works.
    case connectionPragma(String)
}

/// Pragmas whose setting decides how a Tandem connection works (its journal, durability, locks,
/// checkpoints, waits, triggers and whether it may write), set by Tandem from its
/// ``Configuration``: the user's SQL may read them, not set them.
///
/// Related SQLite documentation: https://www.sqlite.org/pragma.html
let connectionPragmas: Set<String> = [
    "query_only", "journal_mode", "locking_mode", "synchronous", "wal_autocheckpoint", "busy_timeout", "recursive_triggers",
    "read_uncommitted", "journal_size_limit", "foreign_keys", "ignore_check_constraints", "trusted_schema",
]

/// The connection's authorizer: it records read sets, refuses transaction control inside a
/// transaction Tandem owns, and keeps the tables its ``ConnectionRules`` protect to their owner.
///
/// Every statement is judged when it is prepared, the statements of the triggers it fires
/// included (SQLite names the trigger in the authorizer's fourth argument):
/// - A write to one of Tandem's tables by a trigger is allowed when the trigger is one of the
///   views' own (which queue CRUD entries), and refused for any other trigger, from any caller.
/// - A direct write to one of Tandem's tables, and the creation, change or removal of an object
///   named like Tandem's or on one of its tables, is refused while the user's SQL runs
///   (``Connection/asUser(_:)``: the SQL of ``Transaction``'s public methods, and so of `tandem
///   exec` and `tandem query`), and allowed for Tandem's own statements.
/// Writers that do not use Tandem (the `sqlite3` shell) are not judged: `tandem check` reports
/// what they changed.
///
/// Related SQLite documentation: https://www.sqlite.org/c3ref/set_authorizer.html
extension Connection {
    func installAuthorizer() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_set_authorizer(
            handle,
            { context, action, first, second, _, trigger in
                guard let context else { return SQLITE_OK }
                let connection = Unmanaged<Connection>.fromOpaque(context).takeUnretainedValue()
                return connection.authorize(action, first, second, trigger)
            }, context)
    }

    private func authorize(
        _ action: Int32, _ first: UnsafePointer<CChar>?, _ second: UnsafePointer<CChar>?,
        _ trigger: UnsafePointer<CChar>?
    ) -> Int32 {
        switch action {
        case SQLITE_READ:
            if let first, readTables != nil { readTables?.insert(String(cString: first)) }
            return SQLITE_OK
        case SQLITE_SAVEPOINT:
            if let first, let second {
                let operation: Statement.Savepoint.Operation? =
                    switch String(cString: first) {
                    case "BEGIN": .begin
                    case "RELEASE": .release
                    case "ROLLBACK": .rollback
                    default: nil
                    }
                preparedSavepoint = operation.map { Statement.Savepoint(operation: $0, name: String(cString: second)) }
            }
            return SQLITE_OK
        case SQLITE_TRANSACTION:
            guard forbidsTransactionControl else { return SQLITE_OK }
            return refuse(.transactionControl)
        case SQLITE_INSERT, SQLITE_UPDATE, SQLITE_DELETE:
            if trigger == nil, preparedWriteTarget == nil, let first {
                preparedWriteTarget = Statement.WriteTarget(action: action, table: String(cString: first))
            }
            guard let first, let rules, rules.isProtected(first) else { return SQLITE_OK }
            if let trigger {
                if rules.isOwnTrigger(trigger) { return SQLITE_OK }
                return refuse(.foreignTrigger(trigger: String(cString: trigger), table: String(cString: first)))
            }
            return runsUserSQL ? refuse(.write(table: String(cString: first))) : SQLITE_OK
        case SQLITE_CREATE_INDEX, SQLITE_CREATE_TABLE, SQLITE_CREATE_TRIGGER, SQLITE_CREATE_VIEW,
            SQLITE_CREATE_TEMP_INDEX, SQLITE_CREATE_TEMP_TABLE, SQLITE_CREATE_TEMP_TRIGGER, SQLITE_CREATE_TEMP_VIEW,
            SQLITE_DROP_INDEX, SQLITE_DROP_TABLE, SQLITE_DROP_TRIGGER, SQLITE_DROP_VIEW,
            SQLITE_DROP_TEMP_INDEX, SQLITE_DROP_TEMP_TABLE, SQLITE_DROP_TEMP_TRIGGER, SQLITE_DROP_TEMP_VIEW:
            // The object's name, and for an index or a trigger the table it is on.
            guard runsUserSQL else { return SQLITE_OK }
            for name in [first, second] {
                if let name, let rules, rules.isProtected(name) { return refuse(.schemaChange(object: String(cString: name))) }
            }
            return SQLITE_OK
        case SQLITE_ALTER_TABLE:
            guard runsUserSQL, let second, let rules, rules.isProtected(second) else { return SQLITE_OK }
            return refuse(.schemaChange(object: String(cString: second)))
        case SQLITE_PRAGMA:
            // writable_schema would let the user's SQL edit the schema table itself.
            guard runsUserSQL, let first, second != nil else { return SQLITE_OK }
            if strcasecmp(first, "writable_schema") == 0 { return refuse(.schemaChange(object: "sqlite_schema")) }
            guard rules != nil else { return SQLITE_OK }
            let name = String(cString: first).lowercased()
            return connectionPragmas.contains(name) ? refuse(.connectionPragma(name)) : SQLITE_OK
        default:
            return SQLITE_OK
        }
    }

    private func refuse(_ refusal: AuthorizerRefusal) -> Int32 {
        if self.refusal == nil { self.refusal = refusal }
        return SQLITE_DENY
    }

    /// Tandem's own transaction statements, kept apart from the statement cache that user SQL
    /// reaches: a user's `COMMIT` is prepared anew (and refused), never served from here.
    enum Control: String {
        case begin = "BEGIN"
        case beginImmediate = "BEGIN IMMEDIATE"
        case commit = "COMMIT"
    }

    func control(_ statement: Control) throws {
        if let prepared = controlStatements[statement] { return try prepared.run([]) }
        precondition(!forbidsTransactionControl, "Tandem's own transaction statements run outside user SQL")
        let prepared = try prepare(statement.rawValue, persistent: true)
        controlStatements[statement] = prepared
        try prepared.run([])
    }

    /// Runs `body` (the caller's statements inside a transaction Tandem owns) with transaction control refused.
    func withoutTransactionControl<T>(_ body: () throws -> T) rethrows -> T {
        forbidsTransactionControl = true
        defer { forbidsTransactionControl = false }
        return try body()
    }

    /// Turns a refusal by the authorizer into a clear error in the user's terms; any other error
    /// as it is.
    func explainRefusal(_ error: any Error, sql: String) -> any Error {
        guard let refusal else { return error }
        self.refusal = nil
        guard error is SQLiteError else { return error }
        if inReadTransaction, refusal != .transactionControl { return TandemError.readOnly(path: path) }
        let reason =
            rules?.reason(for: refusal)
            ?? "BEGIN, COMMIT, END and ROLLBACK are not allowed inside a transaction the connection owns (SAVEPOINT works)"
        return TandemError.invalidSQL(sql: sql, reason: reason)
    }

    /// The tables a statement reads, found with the authorizer while it is prepared, and the
    /// shadow tables of the virtual tables among them (an FTS5 table's `_data`, `_idx`, …; an
    /// R*Tree's `_node`, …), which its writes change instead of the virtual table itself.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/pragma.html#pragma_table_list
    func tablesRead(by sql: String) throws -> Set<String> {
        readTables = []
        defer { readTables = nil }
        _ = try prepare(sql)
        var tables = readTables ?? []
        readTables = nil
        let lowered = Set(tables.map { $0.lowercased() })
        let listed = try fetchAll("SELECT name, type FROM pragma_table_list WHERE type IN ('virtual', 'shadow')")
        let virtual = listed.compactMap { $0[1].stringValue == "virtual" ? $0[0].stringValue?.lowercased() : nil }.filter(lowered.contains)
        for row in listed where row[1].stringValue == "shadow" {
            guard let name = row[0].stringValue else { continue }
            if virtual.contains(where: { name.lowercased().hasPrefix($0 + "_") }) { tables.insert(name) }
        }
        return tables
    }
}
