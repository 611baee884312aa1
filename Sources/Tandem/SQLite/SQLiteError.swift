import CSQLite
import Foundation

/// An error returned by SQLite.
///
/// It prints the extended code, SQLite's name for it, the message, the file and the SQL:
/// `SQLite error 2067 (constraint failed): a row with id 'x' already exists in table notes in '/var/lib/app/app.db' - while executing `INSERT INTO notes(id) VALUES (?)``.
/// Match a result code in a `catch` clause; a primary code matches all its extended codes:
///
/// ```swift
/// do { try db.execute("…") }
/// catch SQLiteError.Code.busy { … }           // SQLITE_BUSY, BUSY_RECOVERY, BUSY_SNAPSHOT, BUSY_TIMEOUT
/// catch let error as SQLiteError where error.code == .constraint { … }
/// ```
///
/// Related SQLite documentation: https://www.sqlite.org/rescode.html
public struct SQLiteError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// A primary SQLite result code (the low 8 bits of an extended code).
    public struct Code: RawRepresentable, Hashable, Sendable {
        /// The primary result code, e.g. 5 for `SQLITE_BUSY`.
        public var rawValue: Int32
        /// Keeps the low 8 bits, so an extended code maps to its primary code.
        public init(rawValue: Int32) { self.rawValue = rawValue & 0xff }
        public static let error = Code(rawValue: SQLITE_ERROR)
        public static let busy = Code(rawValue: SQLITE_BUSY)
        public static let locked = Code(rawValue: SQLITE_LOCKED)
        public static let readOnly = Code(rawValue: SQLITE_READONLY)
        public static let corrupt = Code(rawValue: SQLITE_CORRUPT)
        public static let notADatabase = Code(rawValue: SQLITE_NOTADB)
        public static let cantOpen = Code(rawValue: SQLITE_CANTOPEN)
        public static let constraint = Code(rawValue: SQLITE_CONSTRAINT)
        public static let interrupt = Code(rawValue: SQLITE_INTERRUPT)
        public static let ioError = Code(rawValue: SQLITE_IOERR)
        public static let misuse = Code(rawValue: SQLITE_MISUSE)
        public static let full = Code(rawValue: SQLITE_FULL)
        public static let auth = Code(rawValue: SQLITE_AUTH)

        /// Lets `catch SQLiteError.Code.busy` match an ``SQLiteError`` whose primary code is this one.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? SQLiteError)?.code == code
        }
    }

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
    static let constraintDatatype: Int32 = SQLITE_CONSTRAINT | (12 << 8)

    /// The primary result code of ``extendedCode``.
    public var code: Code { Code(rawValue: extendedCode) }

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
