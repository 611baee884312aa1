/// A value a column refused, or one that could not be read as its property's type: where it
/// is, as fields (table, column, and the row when it is known), with the message that says it
/// in full. Thrown as ``TandemError/invalidValue(_:)`` by the bulk insert, records and imports,
/// and found on ``SQLiteError/refusal`` for the same refusal through SQL, so that code which
/// handles it reads the fields instead of parsing the text.
///
/// ```swift
/// do { try db.write { tx in try tx.insert(into: "notes", columns: ["id", "done"], rows: rows) } }
/// catch TandemError.invalidValue(let refusal) { print(refusal.table, refusal.column, refusal.rowID ?? "?") }
/// ```
public struct ValueRefusal: Sendable, Hashable, CustomStringConvertible {
    /// The table, by its schema name (`notes`).
    public var table: String
    /// The column, by its schema name (`done`).
    public var column: String
    /// The row's id, when the write or read that refused the value knew it.
    public var rowID: String?
    /// The whole message, naming table, column and value: `notes.done is an integer column:
    /// 2.5 (real) does not convert to an integer exactly`.
    public var message: String

    public init(table: String, column: String, rowID: String? = nil, message: String) {
        self.table = table
        self.column = column
        self.rowID = rowID
        self.message = message
    }

    public var description: String { message }
}
