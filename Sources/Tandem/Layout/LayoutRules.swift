import CSQLite
import Foundation

/// Tandem's ``ConnectionRules``: its own tables (``InternalTables``) are kept to Tandem, row
/// changes in data tables and the upload queue are counted, and messages name the user's tables
/// and columns instead of the data tables behind the views (``ConstraintMessage``).
struct LayoutRules: ConnectionRules {
    func isProtected(_ table: UnsafePointer<CChar>) -> Bool { InternalTables.isInternal(table) }

    func isOwnTrigger(_ trigger: UnsafePointer<CChar>) -> Bool { InternalTables.isViewTrigger(trigger) }

    func kind(ofTable table: String) -> ChangedTableKind {
        InternalTables.declaredTable(ofDataTable: table) != nil ? .data : table == InternalTables.crud ? .queue : .other
    }

    /// An entry's `data` begins `{"op":"PUT","type":"notes",` (as every writer of the queue
    /// spells it): the range of `notes`. Nil for another shape, or a name with an escape (no
    /// declared name needs one).
    private static let typeKey = Array(#","type":""#.utf8)

    func queuedTableRange(in data: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        let key = Self.typeKey
        // `op` is PUT, PATCH or DELETE: the key stands within the first 24 bytes.
        let candidates = 7..<max(7, min(24, data.count - key.count + 1))
        guard let at = candidates.first(where: { data[$0..<($0 + key.count)].elementsEqual(key) }) else { return nil }
        let start = at + key.count
        var end = start
        while end < data.count, data[end] != UInt8(ascii: "\"") {
            if data[end] == UInt8(ascii: "\\") { return nil }
            end += 1
        }
        return end < data.count && end > start ? start..<end : nil
    }

    /// Its data table: an insert-only table has none with rows, so its queued entries are how its
    /// changes are seen; for other tables the data table is recorded already.
    func changedTable(forQueued table: String) -> String {
        InternalTables.dataTable(of: table, localOnly: false)
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
