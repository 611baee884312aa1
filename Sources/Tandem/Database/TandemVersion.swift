import CSQLite

/// Tandem's version, and the SQLite library it runs on.
public enum TandemVersion {
    /// Tandem's own version.
    public static let string = "0.6.0"
    /// The SQLite library's version (`sqlite3_libversion()`), e.g. `3.40.1`.
    public static var sqlite: String { String(cString: sqlite3_libversion()) }
}
