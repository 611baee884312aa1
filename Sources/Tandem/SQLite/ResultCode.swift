import CSQLite

/// An SQLite result code: a primary code (the low 8 bits, such as `SQLITE_CONSTRAINT`) or an
/// extended one (such as `SQLITE_CONSTRAINT_UNIQUE`, the primary code plus a detail in the
/// higher bits).
///
/// In a `catch` clause or a `switch`, a primary code matches itself and all its extended codes,
/// and an extended code matches only itself (GRDB's `ResultCode` matches the same way):
///
/// ```swift
/// do { try db.execute("INSERT INTO notes(id, title) VALUES (?, ?)", ["a", "x"]) }
/// catch ResultCode.constraintPrimaryKey { … }  // only a duplicate id
/// catch ResultCode.constraint { … }            // any other constraint
/// catch ResultCode.busy { … }                  // SQLITE_BUSY, BUSY_RECOVERY, BUSY_SNAPSHOT, BUSY_TIMEOUT
/// ```
///
/// `==` compares the codes exactly.
///
/// Related SQLite documentation: https://www.sqlite.org/rescode.html
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code, e.g. 5 for `SQLITE_BUSY` or 2067 for `SQLITE_CONSTRAINT_UNIQUE`.
    public var rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code of this code (itself when it is one).
    public var primaryResultCode: ResultCode { ResultCode(rawValue: rawValue & 0xff) }

    /// Whether this is a primary code, which matches its extended codes too.
    public var isPrimary: Bool { rawValue & ~0xff == 0 }

    /// SQLite's English name for the code (`sqlite3_errstr`), e.g. "constraint failed".
    public var description: String {
        String(validatingCString: sqlite3_errstr(rawValue)).map { "\(rawValue) (\($0))" } ?? String(rawValue)
    }

    /// A primary `pattern` matches `code` when `code` is it or one of its extended codes; an
    /// extended `pattern` matches only itself.
    public static func ~= (pattern: ResultCode, code: ResultCode) -> Bool {
        pattern.isPrimary ? pattern == code.primaryResultCode : pattern == code
    }

    /// Matches an ``SQLiteError`` whose extended code `pattern` matches (see the other `~=`).
    public static func ~= (pattern: ResultCode, error: any Error) -> Bool {
        guard let error = error as? SQLiteError else { return false }
        return pattern ~= error.extendedResultCode
    }

    // Primary codes.
    /// `SQLITE_ERROR`: a generic error (bad SQL, a missing table).
    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    /// `SQLITE_BUSY`: another connection holds a lock the statement needs.
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    /// `SQLITE_LOCKED`: a conflict inside this connection (a table in use by a statement still running).
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    /// `SQLITE_READONLY`: a write to a database opened read-only, or a file that cannot be written.
    public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
    /// `SQLITE_INTERRUPT`: the statement was interrupted.
    public static let interrupt = ResultCode(rawValue: SQLITE_INTERRUPT)
    /// `SQLITE_IOERR`: the operating system reported an I/O error.
    public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
    /// `SQLITE_CORRUPT`: the database file is malformed.
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    /// `SQLITE_FULL`: the disk (or the temporary store) is full.
    public static let full = ResultCode(rawValue: SQLITE_FULL)
    /// `SQLITE_CANTOPEN`: the file could not be opened.
    public static let cantOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
    /// `SQLITE_CONSTRAINT`: a constraint failed (matches every extended constraint code).
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    /// `SQLITE_MISUSE`: SQLite was called in a way it does not allow.
    public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
    /// `SQLITE_AUTH`: the authorizer refused the statement (Tandem's own tables are kept to Tandem).
    public static let auth = ResultCode(rawValue: SQLITE_AUTH)
    /// `SQLITE_NOTADB`: the file is not an SQLite database.
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)

    // Extended codes (the C macros Swift does not import, by their documented values).
    /// `SQLITE_BUSY_RECOVERY`: another connection is recovering the WAL.
    public static let busyRecovery = ResultCode(rawValue: SQLITE_BUSY | (1 << 8))
    /// `SQLITE_BUSY_SNAPSHOT`: a read transaction's snapshot is too old to write from.
    public static let busySnapshot = ResultCode(rawValue: SQLITE_BUSY | (2 << 8))
    /// `SQLITE_BUSY_TIMEOUT`: a blocking lock wait timed out.
    public static let busyTimeout = ResultCode(rawValue: SQLITE_BUSY | (3 << 8))
    /// `SQLITE_CONSTRAINT_CHECK`: a CHECK constraint failed.
    public static let constraintCheck = ResultCode(rawValue: SQLITE_CONSTRAINT | (1 << 8))
    /// `SQLITE_CONSTRAINT_FOREIGNKEY`: a foreign key constraint failed.
    public static let constraintForeignKey = ResultCode(rawValue: SQLITE_CONSTRAINT | (3 << 8))
    /// `SQLITE_CONSTRAINT_NOTNULL`: a NOT NULL constraint failed.
    public static let constraintNotNull = ResultCode(rawValue: SQLITE_CONSTRAINT | (5 << 8))
    /// `SQLITE_CONSTRAINT_PRIMARYKEY`: a primary key is not unique.
    public static let constraintPrimaryKey = ResultCode(rawValue: SQLITE_CONSTRAINT | (6 << 8))
    /// `SQLITE_CONSTRAINT_TRIGGER`: a trigger raised an error (`RAISE(ABORT, …)`).
    public static let constraintTrigger = ResultCode(rawValue: SQLITE_CONSTRAINT | (7 << 8))
    /// `SQLITE_CONSTRAINT_UNIQUE`: a UNIQUE constraint failed.
    public static let constraintUnique = ResultCode(rawValue: SQLITE_CONSTRAINT | (8 << 8))
    /// `SQLITE_CONSTRAINT_DATATYPE`: a value that does not fit its column's declared type (in Tandem's tables too).
    public static let constraintDatatype = ResultCode(rawValue: SQLITE_CONSTRAINT | (12 << 8))
    /// `SQLITE_READONLY_DBMOVED`: the database file was moved or unlinked while open.
    public static let readOnlyDatabaseMoved = ResultCode(rawValue: SQLITE_READONLY | (4 << 8))
}
