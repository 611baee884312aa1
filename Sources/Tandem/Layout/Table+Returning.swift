/// SQL to read the rows an INSERT or UPDATE through a table's view stored, for its `RETURNING`
/// clause (see `Transaction.storedRows`).
extension TableSchema {
    /// The table whose inserted rows hold what an INSERT through the view stored: the data
    /// table, or the upload queue for an insert-only table (which keeps no local row).
    var insertedRowsTable: String { insertOnly ? InternalTables.crud : dataTableName }

    /// `(id, data)` of an inserted row by the rowid ``insertedRowsTable`` gave it: a data
    /// table's row, or a PUT entry's id and data.
    var insertedRowSQL: String {
        insertOnly
            ? "SELECT \(Self.text("data", path: "'$.id'")), data -> '$.data' FROM \(InternalTables.crud) WHERE id = ?"
            : "SELECT id, data FROM \(quotedDataTable) WHERE rowid = ?"
    }

    /// `(id, data)` of a stored row by its id.
    var storedRowSQL: String { "SELECT id, data FROM \(quotedDataTable) WHERE id = ?" }

    /// `list` (a RETURNING clause's expressions) over one row given as `?1` (its id) and `?2` (its
    /// stored JSON), read as the view reads it, under the table's name.
    func returningSQL(_ list: String) -> String {
        let columns = (["?1 AS id"] + columns.map { "\(extract($0)) AS \(SQLText.identifier($0.name))" }).joined(separator: ", ")
        return "SELECT \(list)\nFROM (SELECT \(columns) FROM (SELECT ?2 AS data)) AS \(quotedName)"
    }
}
