/// One row of a result set: column names and values, in select order.
public struct Row: Sendable, Hashable, CustomStringConvertible {
    /// Column names as SQLite reports them (`sqlite3_column_name`).
    public let columns: [String]
    /// Values, one per column.
    public let values: [DatabaseValue]

    /// A row of `columns` (names) and `values`, the same count, in select order.
    public init(columns: [String], values: [DatabaseValue]) {
        self.columns = columns
        self.values = values
    }

    /// The value at a column index (0-based). Misuse with an index out of range traps.
    public subscript(index: Int) -> DatabaseValue { values[index] }

    /// The value of the first column with this name, or `nil` if there is none.
    public subscript(name: String) -> DatabaseValue? {
        guard let i = columns.firstIndex(of: name) else { return nil }
        return values[i]
    }

    public var description: String {
        "[" + zip(columns, values).map { "\($0): \($1)" }.joined(separator: ", ") + "]"
    }

    /// The row as a JSON object (`[column: value]`) for `JSONSerialization`.
    public var jsonObject: [String: Any] {
        var object: [String: Any] = [:]
        for (c, v) in zip(columns, values) { object[c] = v.jsonObject }
        return object
    }
}
