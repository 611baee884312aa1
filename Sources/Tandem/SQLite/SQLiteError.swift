import CSQLite
import Foundation

/// An error returned by SQLite.
///
/// It prints the extended code, SQLite's name for it, the message, the file and the SQL:
///
/// ```
/// SQLite error 2067 (constraint failed): a row with id 'x' already exists in table notes in '/var/lib/app/app.db' - while executing `INSERT INTO notes(id) VALUES (?)`
/// ```
///
/// Match a ``ResultCode`` in a `catch` clause; a primary code matches all its extended codes:
///
/// ```swift
/// do { try db.execute("…") }
/// catch ResultCode.busy { … }                  // SQLITE_BUSY, BUSY_RECOVERY, BUSY_SNAPSHOT, BUSY_TIMEOUT
/// catch ResultCode.constraintPrimaryKey { … }   // only this extended code
/// catch let error as SQLiteError where error.code == .constraint { … }
/// ```
///
/// Related SQLite documentation: https://www.sqlite.org/rescode.html
public struct SQLiteError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// The extended result code, e.g. `SQLITE_BUSY_RECOVERY` (261).
    public let extendedCode: Int32
    /// SQLite's message (`sqlite3_errmsg`).
    public let message: String
    /// The SQL being executed, when there was one.
    public let sql: String?
    /// The database file, when known.
    public let path: String?
    /// The statement's arguments, when known; not printed (they may hold private data).
    public let arguments: [DatabaseValue]?

    /// `SQLITE_CONSTRAINT_DATATYPE`: a value does not fit its column's declared type (a macro
    /// Swift does not import).
    static let constraintDatatype: Int32 = ResultCode.constraintDatatype.rawValue

    /// The primary result code of ``extendedCode``, e.g. ``ResultCode/constraint``.
    public var code: ResultCode { ResultCode(rawValue: extendedCode).primaryResultCode }

    /// ``extendedCode`` as a ``ResultCode``, e.g. ``ResultCode/constraintUnique``.
    public var extendedResultCode: ResultCode { ResultCode(rawValue: extendedCode) }

    /// An error as SQLite reports it, with the SQL and the database path when known.
    public init(extendedCode: Int32, message: String, sql: String? = nil, path: String? = nil, arguments: [DatabaseValue]? = nil) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
        self.path = path
        self.arguments = arguments
    }

    /// True for SQLITE_BUSY and its extended codes (BUSY_RECOVERY, BUSY_SNAPSHOT, BUSY_TIMEOUT);
    /// not for SQLITE_LOCKED, a conflict inside this process's own connection.
    public var isBusy: Bool { code == .busy }

    /// Busy or locked: another connection's lock, which waiting may resolve.
    var isLockContention: Bool { code == .busy || code == .locked }

    /// The same text as ``description``, for `localizedDescription`.
    public var errorDescription: String? { description }

    public var description: String {
        var text = "SQLite error \(extendedCode)"
        if let name = String(validatingCString: sqlite3_errstr(extendedCode)) { text += " (\(name))" }
        text += ": \(message)"
        if let path { text += " in '\(path)'" }
        if let sql { text += " - while executing `\(sql)`" }
        return text
    }
}

extension SQLiteError: Remediable {
    /// ``Remedy/longerBusyTimeout`` for a busy or locked database (another connection held the
    /// lock past the busy timeout); nil otherwise.
    public var remedy: Remedy? { code == .busy || code == .locked ? .longerBusyTimeout : nil }
}
