import Foundation

extension Transaction {
    /// Inserts many rows into a declared table in this write transaction, captured for upload
    /// as `INSERT INTO table(columns) VALUES (…)` through its view captures them (the same stored
    /// values and the same PUT entries, in order, read back identically; only the text of a real
    /// that needs 18 digits may differ in its last digits, for the same double), but faster for bulk loads:
    /// the row JSON is built in Swift and written straight into the table's storage and the
    /// upload queue, many rows per statement, instead of running the view's trigger per row.
    ///
    /// ```swift
    /// try db.write { tx in
    ///     try tx.insert(into: "notes", columns: ["id", "title", "done"],
    ///                   rows: titles.enumerated().map { [.text("n\($0)"), .text($1), .integer(0)] })
    /// }
    /// ```
    /// - Parameters:
    ///   - table: a table of the schema (its name as declared; case-insensitive).
    ///   - columns: the columns each row gives values for; `id` may be one, else ids are minted
    ///     (lowercase UUIDs). Columns left out are NULL.
    ///   - rows: one value per column in each row.
    /// - Returns: the ids of the inserted rows, in order.
    /// - Throws: ``TandemError/invalidArguments(_:)`` for an undeclared table or column, a row of
    ///   the wrong length, an empty id, a BLOB or an infinite real (as the view refuses them);
    ///   ``SQLiteError`` for a duplicate id (naming it and the table); ``TandemError/readOnly(path:)``
    ///   inside a read. The error is the one the view, writing row by row, would have raised first
    ///   (the first duplicate id in row order, before a refused row that follows it). Rows are
    ///   written in statements of up to 32: rows of the call before the failing statement (and
    ///   before a refused row) stay in the transaction, as rows of earlier statements do; the
    ///   write rolls back when the error leaves its closure.
    @discardableResult
    public func insert(into table: String, columns: [String], rows: some Sequence<[DatabaseValue]>) throws -> [String] {
        if isReadOnly { throw TandemError.readOnly(path: connection.path) }
        guard let declared = try SchemaInstaller.cachedStoredSchema(self)?.tables.first(where: { $0.name.lowercased() == table.lowercased() }) else {
            throw TandemError.invalidArguments("no table named \(table) is declared in '\(connection.path)'")
        }
        return try RowInserter(table: declared, columns: columns).insert(rows, on: connection)
    }
}
