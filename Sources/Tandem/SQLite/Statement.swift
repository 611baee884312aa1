import CSQLite
import Foundation

/// A prepared statement. Owned by one ``Connection``; finalized in `deinit`. Not Sendable.
///
/// Related SQLite documentation: https://www.sqlite.org/c3ref/stmt.html
final class Statement {
    let handle: OpaquePointer
    let sql: String
    unowned let connection: Connection
    /// The arguments last bound, for error messages.
    private var arguments: [DatabaseValue] = []

    /// The table a statement inserts into, updates or deletes from itself, and how.
    struct WriteTarget {
        /// `SQLITE_INSERT`, `SQLITE_UPDATE` or `SQLITE_DELETE`.
        var action: Int32
        var table: String
    }

    /// The table this statement writes itself (not through a trigger), as the authorizer saw it
    /// when the statement was prepared; nil for a statement that writes no table.
    let writeTarget: WriteTarget?

    /// A `SAVEPOINT`, `RELEASE` or `ROLLBACK TO` statement.
    struct Savepoint {
        enum Operation { case begin, release, rollback }
        var operation: Operation
        var name: String
    }

    /// What this statement does with a savepoint, as the authorizer saw it when it was prepared.
    let savepoint: Savepoint?

    init(connection: Connection, handle: OpaquePointer, sql: String, writeTarget: WriteTarget? = nil, savepoint: Savepoint? = nil) {
        self.connection = connection
        self.handle = handle
        self.sql = sql
        self.writeTarget = writeTarget
        self.savepoint = savepoint
    }

    deinit { sqlite3_finalize(handle) }

    var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }
    var columnCount: Int { Int(sqlite3_column_count(handle)) }
    var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    /// The result's column names as the statement was last prepared: SQLite prepares a
    /// statement again at its next step after a schema change (a view another process
    /// regenerated with a renamed or added column), so the names are read again after that.
    var columnNames: [String] {
        let prepared = sqlite3_stmt_status(handle, Int32(SQLITE_STMTSTATUS_REPREPARE), 0)
        if let names, names.prepared == prepared { return names.names }
        let read = (0..<Int32(columnCount)).map { String(cString: sqlite3_column_name(handle, $0)) }
        names = (prepared, read)
        return read
    }
    private var names: (prepared: Int32, names: [String])?

    /// Resets the statement and binds `arguments` to its `?` parameters, in order.
    /// - Throws: ``TandemError/invalidArguments`` when the count does not match the SQL; for a
    ///   NaN given to a statement that writes, the error naming its column (``nanRefusal(_:)``).
    func bind(_ arguments: [DatabaseValue]) throws {
        if !isReadOnly, arguments.contains(where: \.isNaN) { throw nanRefusal(arguments) }
        try bindValues(arguments)
    }

    /// ``bind(_:)`` without the check for NaN.
    func bindValues(_ arguments: [DatabaseValue]) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        self.arguments = arguments
        guard arguments.count == parameterCount else {
            throw TandemError.invalidArguments(
                "the SQL has \(parameterCount) parameter(s) but \(arguments.count) argument(s) were given: `\(sql)`")
        }
        for (offset, value) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(handle, index)
            case .integer(let i): rc = sqlite3_bind_int64(handle, index, i)
            case .real(let d): rc = sqlite3_bind_double(handle, index, d)
            case .text(let s): rc = sqlite3_bind_text(handle, index, s, Int32(s.utf8.count), tandem_sqlite_transient())  // NULs included
            case .blob(let d):
                rc = d.withUnsafeBytes {
                    sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), tandem_sqlite_transient())
                }
            }
            if rc != SQLITE_OK { throw connection.error(rc, sql: sql) }
        }
    }

    /// Steps once. Returns true when a row is available.
    func step() throws -> Bool {
        switch CNumericLocale.run({ sqlite3_step(handle) }) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let rc:
            sqlite3_reset(handle)
            let error = connection.error(rc, sql: sql, arguments: arguments)
            // A statement SQLite prepares again after a schema change is judged again.
            throw rc & 0xff == SQLITE_AUTH ? connection.explainRefusal(error, sql: sql) : error
        }
    }

    func value(at column: Int32) -> DatabaseValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_NULL: return .null
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            // By length, not up to the first NUL: text may hold NUL characters.
            guard let text = sqlite3_column_text(handle, column) else { return .text("") }
            let count = Int(sqlite3_column_bytes(handle, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        default:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        }
    }

    /// Runs the statement to completion and collects every row.
    func fetchAll(_ arguments: [DatabaseValue]) throws -> [Row] {
        try bind(arguments)
        defer { sqlite3_reset(handle); self.arguments = [] }
        var rows: [Row] = []
        var names: [String]?
        while try step() {
            let columns = names ?? columnNames  // after the first step, which prepares again after a schema change
            names = columns
            rows.append(Row(columns: columns, values: (0..<Int32(columns.count)).map(value(at:))))
        }
        return rows
    }

    /// Runs the statement to completion, its parameters bound by `bind` straight from the
    /// caller's memory (which must outlive the call), for bulk writes that would otherwise copy
    /// every value into a ``DatabaseValue``. `described` stands for the arguments in an error
    /// (a duplicate id is named from them).
    func run(described: [DatabaseValue], binding bind: (OpaquePointer) -> Int32) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        arguments = described
        defer { sqlite3_reset(handle); arguments = [] }
        let rc = bind(handle)
        if rc != SQLITE_OK { throw connection.error(rc, sql: sql) }
        while try step() {}
    }

    /// The first column of the first row, or `.null` when there is no row.
    func scalar(_ arguments: [DatabaseValue]) throws -> DatabaseValue {
        try bind(arguments)
        defer { sqlite3_reset(handle); self.arguments = [] }
        return try step() ? value(at: 0) : .null
    }

    /// Runs the statement to completion, discarding rows.
    func run(_ arguments: [DatabaseValue]) throws {
        try bind(arguments)
        defer { sqlite3_reset(handle); self.arguments = [] }
        while try step() {}
    }
}
