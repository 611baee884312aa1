import CSQLite
import Foundation

/// Tandem's ``ConnectionRules``: its own tables (``InternalTables``) are kept to Tandem, row
/// changes in data tables and the upload queue are counted, and messages name the user's tables
/// and columns instead of the data tables behind the views (``ConstraintMessage``).
struct LayoutRules: ConnectionRules {
    func isProtected(_ table: UnsafePointer<CChar>) -> Bool { InternalTables.isInternal(table) && !InternalTables.isSearchShadow(table) }

    func isOwnTrigger(_ trigger: UnsafePointer<CChar>) -> Bool { InternalTables.isOwnTrigger(trigger) }

    func kind(ofTable table: String) -> ChangedTableKind {
        if table.hasPrefix(InternalTables.localDataPrefix) { return .data }
        return InternalTables.declaredTable(ofDataTable: table) != nil ? .syncedData : table == InternalTables.crud ? .queue : .other
    }

    /// `SELECT DISTINCT` over the entries the transaction queued: an insert-only table's data
    /// table stands for it (no rows of its own are stored).
    func tablesQueued(from rowid: Int64, on connection: Connection) throws -> Set<String> {
        let rows = try connection.fetchAll("SELECT DISTINCT data ->> '$.type' FROM \(InternalTables.crud) WHERE id >= ?", [.integer(rowid)])
        return Set(rows.compactMap { $0[0].stringValue.map { InternalTables.dataTable(of: $0, localOnly: false) } })
    }

    func reason(for refusal: AuthorizerRefusal) -> String {
        switch refusal {
        case .transactionControl:
            return "BEGIN, COMMIT, END and ROLLBACK are not allowed inside a Tandem transaction; it commits when the block returns and rolls back when it throws (SAVEPOINT works)"
        case .write(let table):
            return InternalTables.writeRefusal(table)
        case .schemaChange(let object):
            return InternalTables.schemaRefusal(object)
        case .foreignTrigger(let trigger, let table):
            return
                "the trigger \(trigger), which Tandem did not make, writes \(InternalTables.describe(table)), which only Tandem writes: drop the trigger (\(Remedy.listLayoutProblems.apiTerms) lists such triggers)"
        case .connectionPragma(let name):
            return "PRAGMA \(name) decides how Tandem's connection works and is set by Tandem (see Configuration); SQL may read it, not set it"
        }
    }

    func userTerms(
        code: Int32, message: String, sql: String?, arguments: [DatabaseValue],
        on connection: Connection
    ) -> (code: Int32, message: String)? {
        if code & 0xff == SQLITE_CONSTRAINT {
            return (code, ConstraintMessage.rewrite(message, sql: sql, arguments: arguments, on: connection))
        }
        if code == SQLITE_ERROR, let refusal = ConstraintMessage.typeRefusal(in: message) {
            // A value a view's trigger refused for its column's type (see `TableSchema.storedValue`).
            return (SQLiteError.constraintDatatype, refusal)
        }
        return nil
    }

    func rowsReturned(by statement: Statement, _ arguments: [DatabaseValue], in tx: Transaction) throws -> [Row]? {
        try tx.storedRows(statement, arguments)
    }

    func nanRefusal(in message: String) -> String? {
        TableSchema.blobRefusal(in: message).map { TableSchema.nanMessage(table: $0.table, column: $0.column) }
    }
}
