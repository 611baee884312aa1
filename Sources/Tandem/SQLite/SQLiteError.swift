import CSQLite

/// An error returned by SQLite.
///
/// It prints like `SQLite error 19 (SQLITE_CONSTRAINT): NOT NULL constraint failed: … - while executing `INSERT …``.
/// Match a primary result code with `error.code == .busy` or `catch let e as SQLiteError where e.code == .busy`;
/// extended codes are in ``extendedCode``.
///
/// Related SQLite documentation: https://www.sqlite.org/rescode.html
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
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
    }

    /// The extended result code, e.g. `SQLITE_BUSY_RECOVERY` (261).
    public let extendedCode: Int32
    /// SQLite's message (`sqlite3_errmsg`).
    public let message: String
    /// The SQL being executed, when there was one.
    public let sql: String?
    /// The database file, when known.
    public let path: String?

    /// The primary result code of ``extendedCode``.
    public var code: Code { Code(rawValue: extendedCode) }

    /// An error as SQLite reports it, with the SQL and the database path when known.
    public init(extendedCode: Int32, message: String, sql: String? = nil, path: String? = nil) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
        self.path = path
    }

    /// True for SQLITE_BUSY and its extended codes (BUSY_RECOVERY, BUSY_SNAPSHOT, BUSY_TIMEOUT).
    public var isBusy: Bool { code == .busy || code == .locked }

    public var description: String {
        var text = "SQLite error \(extendedCode)"
        if let name = String(validatingCString: sqlite3_errstr(extendedCode)) { text += " (\(name))" }
        text += ": \(message)"
        if let path { text += " in '\(path)'" }
        if let sql { text += " - while executing `\(sql)`" }
        return text
    }
}
