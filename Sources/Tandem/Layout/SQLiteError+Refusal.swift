extension SQLiteError {
    /// For a value a column refused through SQL (a constraint error whose message Tandem wrote:
    /// a view's trigger refused it for the column's type, or it was a NaN, an infinite real or a
    /// BLOB), the table and column as fields; nil for any other error. The row is not known here: an
    /// INSERT through a view may mint its id. The same refusal on the bulk insert, records and
    /// imports is ``TandemError/invalidValue(_:)``, with the same message.
    public var refusal: ValueRefusal? {
        guard code == .constraint, let (table, column) = ConstraintMessage.refusedColumn(in: message) else { return nil }
        return ValueRefusal(table: table, column: column, message: message)
    }
}
