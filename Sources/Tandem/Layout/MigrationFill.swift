import CSQLite
import Foundation

/// Values a migration computes from the user's SQL into one column (a fill, a type change with
/// a conversion), written in one pass over the table's stored rows: each row's value is
/// computed, stored by the column's write rule, compared with the row's current value and,
/// where it differs, written into the row's JSON together with the renames waiting for the
/// table (``StoredKeyMoves``); with uploads, a PATCH per changed row follows.
///
/// The pass is one `UPDATE` of the data table. The user's expression is evaluated once per row
/// in a correlated subquery whose columns read like the table's view (`FROM (SELECT … AS title,
/// …) AS notes`, renamed columns from the keys that hold them). Two SQL functions carry the value
/// from the comparison to the write, so that the expression is never evaluated twice:
/// `tandem_fill_changed(value, current, rowid)` applies the write rule and says whether the
/// stored value differs, keeping it; `tandem_fill_value()` returns the kept value. The rule
/// itself is SQL (``TableSchema/storedValue(_:_:in:checkingText:)``), run by a prepared statement
/// for every value but those that need no conversion: NULL, an integer for an integer column,
/// ASCII text for a text column. A value the rule refuses fails the pass, and the row is named
/// from the rowid the function was given.
///
/// As an UPDATE through the view does, the rows a condition selects are read before any row is
/// written (into a temporary table of rowids), an aggregate is refused, and a window function's
/// values are computed over the selected rows first.
///
/// Related SQLite documentation: https://www.sqlite.org/c3ref/create_function.html,
/// https://www.sqlite.org/lang_update.html
final class MigrationFill {
    private static let changed = "tandem_fill_changed"
    private static let value = "tandem_fill_value"
    /// The data table's alias in the pass, which the computed columns read: `ps_` names no
    /// user's table, so the alias hides none.
    private static let row = "ps_row"

    private let column: ColumnSchema
    private let db: OpaquePointer
    /// `SELECT <value as stored>, <as json_set takes it>` for `?1` (for a real, the second is its exact literal).
    private let rule: Statement
    /// Every row is written, its value unchanged or not (a type change stores each anew).
    private let everyRow: Bool
    /// The value the last changed row gets, as `json_set` takes it (nil for NULL).
    private var kept: OpaquePointer?
    /// How many rows the pass changed, and which (by rowid) when they queue uploads.
    private var changedRows = 0
    private var changedRowids: [Int64]?
    /// The rowid of the row whose value the rule refused.
    private var refusedRowid: Int64?

    private init(column: ColumnSchema, of table: TableSchema, everyRow: Bool, recordingRows: Bool, on connection: Connection) throws {
        self.column = column
        self.everyRow = everyRow
        db = connection.handle
        changedRowids = recordingRows ? [] : nil
        let stored = table.storedValue("?1", column, in: .query)
        let json = column.type == .real ? "CASE WHEN v IS NULL THEN NULL ELSE \(table.realLiteral("v", column: column, in: .query)) END" : "v"
        rule = try connection.prepare("SELECT v, \(json) FROM (SELECT \(stored) AS v)")
    }

    deinit { sqlite3_value_free(kept) }

    /// Writes `expression` (over `source`'s columns: the table as its view reads it before the
    /// step) into `column` of `table` where `condition` holds, writing `moving` in the same pass
    /// to every row; with `queue`, a PATCH of the column per changed row; with `everyRow`, each
    /// row the condition selects is written even where its value reads the same. Returns how
    /// how many rows it wrote the value into, and how many stored rows it rewrote (the renames
    /// waiting for the table were written to each).
    /// - Throws: ``TandemError/invalidValue(_:)`` naming the first row whose value the column
    ///   refuses; ``SQLiteError`` naming the user's SQL for anything else the statement meets.
    static func run(
        _ expression: String, where condition: String?, over source: TableSchema, into column: ColumnSchema, of table: TableSchema,
        moving: StoredKeyMoves = StoredKeyMoves(), queue: Bool, everyRow: Bool = false, in tx: Transaction
    ) throws -> (filled: Int, rewritten: Int) {
        let userSQL = "SELECT id, (\(expression)) FROM \(source.quotedName) WHERE (\(condition ?? "1"))"
        // The user's SQL, checked as the user's (one statement, Tandem's tables protected)
        // before it is spliced into Tandem's own statement in the same place.
        _ = try tx.connection.asUser { try tx.connection.prepare(userSQL) }
        // A value is one row's: SQLite refuses an aggregate or a window function in a WHERE
        // clause, which tells them apart from the rest. An aggregate is refused, as an UPDATE
        // refuses it; a window function reads the rows the condition selects.
        let window: Bool
        do {
            _ = try tx.connection.asUser { try tx.connection.prepare("SELECT 1 FROM \(source.quotedName) WHERE ((\(expression)) IS NULL OR 1)") }
            window = false
        } catch let error as SQLiteError where error.message.contains("misuse of window function") {
            window = true
        } catch let error as SQLiteError {
            throw SQLiteError(
                extendedCode: error.extendedCode,
                message: "\(error.message): a fill's value is each row's own (an aggregate of the table is a subquery, `(SELECT count(*) FROM \(source.name))`)",
                sql: userSQL, path: error.path, arguments: nil)
        }
        let columns =
            (["\(row).id AS id"]
            + source.columns.map { "\(source.extract(ColumnSchema(name: moving.key(of: $0.name), type: $0.type), from: "\(row).data")) AS \(SQLText.identifier($0.name))" })
            .joined(separator: ", ")
        let current = source.columns.contains { $0.name == column.name } ? SQLText.identifier(column.name) : "NULL"
        // The rows a condition selects, and a window function's values, are read before any row
        // is written, as an UPDATE through the view reads them: into a temporary table by rowid.
        let computed = "temp.\(MigrationValues.table)"
        let selecting = condition != nil || window
        if selecting {
            do {
                try tx.executeOwn(
                    """
                    DROP TABLE IF EXISTS \(computed); CREATE TEMP TABLE \(MigrationValues.table)(rid INTEGER PRIMARY KEY, v);
                    INSERT INTO \(computed)(rid, v) SELECT ps_rowid, \(window ? "(\(expression))" : "NULL")
                    FROM (SELECT \(row).rowid AS ps_rowid, \(columns) FROM \(table.quotedDataTable) AS \(row)) AS \(source.quotedName) WHERE (\(condition ?? "1"))
                    """)
            } catch let error as SQLiteError {
                throw SQLiteError(extendedCode: error.extendedCode, message: error.message, sql: userSQL, path: error.path, arguments: nil)
            }
        }
        defer { if selecting { try? tx.executeOwn("DROP TABLE IF EXISTS \(computed)") } }
        let selected = "\(row).rowid IN (SELECT rid FROM \(computed))"
        let value = window ? "(SELECT v FROM \(computed) WHERE rid = \(row).rowid)" : "(\(expression))"
        let compare = "\(changed)(\(value), \(current), \(row).rowid)"
        let test = selecting ? "CASE WHEN \(selected) THEN \(compare) ELSE 0 END" : compare
        let path = SQLText.literal("$." + column.name)
        let written = column.type == .real ? "json(\(Self.value)())" : "\(Self.value)()"
        let filled = moving.applied(to: "coalesce(data, '{}')", adding: [(path, written)])
        let kept = moving.isEmpty ? "data" : moving.applied(to: "data")
        // The function runs in SET, where the value it keeps is read in the same row (SQLite may
        // collect a WHERE's rows before it writes any); selected rows narrow the rows rewritten.
        let narrowed = selecting && moving.isEmpty ? " WHERE \(selected)" : ""
        let update = """
            UPDATE \(table.quotedDataTable) AS \(row) SET data = CASE WHEN (SELECT \(test) FROM (SELECT \(columns)) AS \(source.quotedName)) \
            THEN \(filled) ELSE \(kept) END\(narrowed)
            """

        let fill = try MigrationFill(column: column, of: table, everyRow: everyRow, recordingRows: queue, on: tx.connection)
        let rewritten = try withExtendedLifetime(fill) {
            fill.register()
            defer { fill.unregister() }
            do {
                try tx.executeOwn(update)
                return Int(tx.connection.changes)
            } catch let error as SQLiteError {
                if let rowid = fill.refusedRowid, var refusal = error.refusal {
                    let id = try tx.scalar("SELECT id FROM \(table.quotedDataTable) WHERE rowid = ?", [rowid])
                    refusal.rowID = id.stringValue
                    refusal.message += " (row \(SQLText.literal(id.stringValue ?? "\(id)")))"
                    throw TandemError.invalidValue(refusal)
                }
                throw SQLiteError(extendedCode: error.extendedCode, message: error.message, sql: userSQL, path: error.path, arguments: nil)
            }
        }
        if let rowids = fill.changedRowids, !rowids.isEmpty {
            try tx.executeOwn(
                """
                INSERT INTO ps_crud(id, tx_id, data) SELECT \(InternalTables.nextCrudID) - 1 + row_number() OVER (ORDER BY d.id), \(InternalTables.nextTransactionID),
                json_object('op', 'PATCH', 'type', ?, 'id', d.id, 'data', json_object(?, d.data -> ?)) FROM json_each(?) AS g JOIN \(table.quotedDataTable) AS d ON d.rowid = g.value ORDER BY d.id;
                \(InternalTables.seedLastCrudID)
                """, [table.name, column.name, "$." + column.name, "[" + rowids.map(String.init).joined(separator: ",") + "]"])
        }
        return (fill.changedRows, rewritten)
    }

    // MARK: - The functions

    private func register() {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let flags = SQLITE_UTF8 | SQLITE_DIRECTONLY
        sqlite3_create_function_v2(
            db, Self.changed, 3, flags, me,
            { context, _, arguments in
                let fill = Unmanaged<MigrationFill>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
                fill.compare(context, arguments![0], arguments![1], rowid: sqlite3_value_int64(arguments![2]))
            }, nil, nil, nil)
        sqlite3_create_function_v2(
            db, Self.value, 0, flags, me,
            { context, _, _ in
                let fill = Unmanaged<MigrationFill>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
                fill.result(context)
            }, nil, nil, nil)
    }

    /// Results in the kept value as a plain value: text a JSON function made carries JSON's
    /// subtype, which `json_set` would embed as JSON instead of quoting it as text.
    private func result(_ context: OpaquePointer?) {
        guard let kept else { return sqlite3_result_null(context) }
        switch sqlite3_value_type(kept) {
        case SQLITE_INTEGER: sqlite3_result_int64(context, sqlite3_value_int64(kept))
        case SQLITE_FLOAT: sqlite3_result_double(context, sqlite3_value_double(kept))
        case SQLITE_TEXT:
            let text = sqlite3_value_text(kept)
            sqlite3_result_text64(
                context, text.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }, sqlite3_uint64(sqlite3_value_bytes(kept)), tandem_sqlite_transient(),
                UInt8(SQLITE_UTF8))
        default: sqlite3_result_null(context)
        }
    }

    private func unregister() {
        sqlite3_reset(rule.handle)
        sqlite3_create_function_v2(db, Self.changed, 3, SQLITE_UTF8, nil, nil, nil, nil, nil)
        sqlite3_create_function_v2(db, Self.value, 0, SQLITE_UTF8, nil, nil, nil, nil, nil)
    }

    /// Stores `value` by the column's rule, keeps it, and results in 1 when it differs from
    /// `current` (by value, type, and for a real its sign), else 0; an error for a value the
    /// column refuses.
    private func compare(_ context: OpaquePointer?, _ value: OpaquePointer?, _ current: OpaquePointer?, rowid: Int64) {
        sqlite3_value_free(kept)
        kept = nil
        let stored: OpaquePointer?
        let type = sqlite3_value_type(value)
        if type == SQLITE_NULL || (column.type == .integer && type == SQLITE_INTEGER) || (column.type == .text && type == SQLITE_TEXT && Self.isASCII(value)) {
            stored = value
            kept = type == SQLITE_NULL ? nil : sqlite3_value_dup(value)
        } else {
            let rule = rule.handle
            sqlite3_reset(rule)
            sqlite3_bind_value(rule, 1, value)
            guard sqlite3_step(rule) == SQLITE_ROW else {
                refusedRowid = rowid
                sqlite3_result_error(context, sqlite3_errmsg(db), -1)
                sqlite3_result_error_code(context, sqlite3_extended_errcode(db))
                sqlite3_reset(rule)
                return
            }
            stored = sqlite3_column_value(rule, 0)
            if sqlite3_column_type(rule, 1) != SQLITE_NULL { kept = sqlite3_value_dup(sqlite3_column_value(rule, 1)) }
        }
        let write = everyRow || Self.differs(stored, current)
        if write {
            changedRows += 1
            changedRowids?.append(rowid)
        }
        sqlite3_result_int(context, write ? 1 : 0)
    }

    /// True when `text` is text of ASCII characters only (NUL included), which every text
    /// column stores as it is.
    private static func isASCII(_ text: OpaquePointer?) -> Bool {
        guard let start = sqlite3_value_text(text) else { return true }
        let bytes = UnsafeBufferPointer(start: start, count: Int(sqlite3_value_bytes(text)))
        return bytes.allSatisfy { $0 < 0x80 }
    }

    /// SQL's `a IS NOT b` for a stored value and the column's current one, a real's sign told
    /// apart at zero (``TableSchema/storedDiffers(_:from:_:)``), text by its bytes; values of
    /// two types differ.
    private static func differs(_ a: OpaquePointer?, _ b: OpaquePointer?) -> Bool {
        switch (sqlite3_value_type(a), sqlite3_value_type(b)) {
        case (SQLITE_NULL, SQLITE_NULL): return false
        case (SQLITE_INTEGER, SQLITE_INTEGER): return sqlite3_value_int64(a) != sqlite3_value_int64(b)
        case (SQLITE_FLOAT, SQLITE_FLOAT):
            let (p, q) = (sqlite3_value_double(a), sqlite3_value_double(b))
            return p != q || (p == 0 && p.sign != q.sign)
        case (SQLITE_TEXT, SQLITE_TEXT):
            let (p, q) = (sqlite3_value_text(a), sqlite3_value_text(b))
            let count = sqlite3_value_bytes(a)
            guard count == sqlite3_value_bytes(b) else { return true }
            guard count > 0, let p, let q else { return false }
            return memcmp(p, q, Int(count)) != 0
        default: return true
        }
    }
}
