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
    func queuedTableRange(in data: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        // Called for every queued row: plain loops over the bytes, no collection algorithms.
        guard let bytes = data.baseAddress, data.count > 7 else { return nil }
        var index = 7  // past `{"op":"`; the op (PUT, PATCH, DELETE) ends at the next quote
        while index < data.count && index < 16 && bytes[index] != 0x22 { index += 1 }
        let key: StaticString = #"","type":""#  // from the op's closing quote
        let keyLength = key.utf8CodeUnitCount
        guard index + keyLength <= data.count, memcmp(bytes + index, key.utf8Start, keyLength) == 0 else { return nil }
        let start = index + keyLength
        var end = start
        while end < data.count && bytes[end] != 0x22 {
            if bytes[end] == 0x5C { return nil }  // a backslash: an escape no declared name needs
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
