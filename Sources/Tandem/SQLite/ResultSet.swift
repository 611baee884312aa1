/// The rows of one statement and its column names, which a result with no rows still has.
public struct ResultSet: Sendable, Hashable {
    /// Column names as SQLite reports them, in select order.
    public let columns: [String]
    public let rows: [Row]

    public init(columns: [String], rows: [Row]) {
        self.columns = columns
        self.rows = rows
    }
}

/// What a script of statements did: the rows of each statement that returns rows (a SELECT, a
/// `RETURNING` clause), and the number of rows it changed.
public struct ScriptResult: Sendable, Hashable {
    public let resultSets: [ResultSet]
    /// Rows inserted, updated or deleted in the user's tables, writes through views included
    /// (SQLite's own `changes()` counts none of those), net of savepoints rolled back; a row an
    /// `INSERT OR REPLACE` replaced counts once, a row an UPDATE left as it was not at all;
    /// Tandem's bookkeeping is not counted.
    public let rowsChanged: Int
}
