/// A synced table's rows as its view shows them, read from the data table (for verification),
/// and the rows whose local state is not the server's on purpose: those with entries in the
/// upload queue or in a transaction set aside.
enum ViewedRows {
    /// Calls `body` with each row's id and the values of `columns` (in that order), as the view
    /// shows them; nothing when the table has no data table (local-only or insert-only).
    static func forEach(of table: TableSchema, columns: [ColumnSchema], in tx: Transaction, _ body: (String, [DatabaseValue]) throws -> Void) throws {
        guard !table.localOnly, !table.insertOnly else { return }
        let selects = (["id"] + columns.map { table.extract($0) }).joined(separator: ", ")
        try tx.forEachRow("SELECT \(selects) FROM \(table.quotedDataTable)") { row in
            try body(row[0].stringValue ?? "", Array(row.values.dropFirst()))
        }
    }

    /// The rows (table, id) with entries queued for upload or set aside.
    static func pending(in tx: Transaction) throws -> Set<RowKey> {
        var rows = Set(try UploadQueueRows.rows(after: 0, in: tx).map(\.1))
        for rejected in try RejectedUploadRows.all(in: tx) {
            for entry in rejected.transaction.entries { rows.insert(RowKey(table: entry.table, id: entry.rowID)) }
        }
        return rows
    }
}

extension TableSchema {
    /// The SQL expression that reads `column` from the JSON object text `source` (an SQL
    /// expression) as Tandem's views show it: the declared type's value, NULL when absent.
    /// Backends that keep rows as Tandem's JSON read them with it to compute the same
    /// ``RowDigest``s as the client.
    public func viewedValueSQL(of column: ColumnSchema, fromJSON source: String) -> String {
        extract(column, from: source)
    }
}
