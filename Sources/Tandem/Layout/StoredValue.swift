import CSQLite

/// A value as a declared column stores it, for the paths that write without the views'
/// triggers (the bulk path, ``RowInserter``) or that compare before writing (imports), by the
/// triggers' own rule (``TableSchema/storedValue(_:_:in:)``).
///
/// A value of the column's type, NULL, a BLOB, a NaN or an infinite real (nearly every value) is
/// decided here; a value of another type is converted by SQLite running the triggers' expression,
/// so both ways convert, and refuse, alike.
enum StoredValue {
    /// `value` as `column` of `table` stores it.
    /// - Throws: ``TandemError/invalidValue(_:)`` with the triggers' message for a value the
    ///   column refuses (the row's id is the caller's to add).
    static func of(_ value: DatabaseValue, column: ColumnSchema, table: TableSchema, on connection: Connection) throws -> DatabaseValue {
        func refusal(_ message: String) -> TandemError {
            .invalidValue(ValueRefusal(table: table.name, column: column.name, message: message))
        }
        switch (value, column.type) {
        case (.null, _): return .null
        case (.real(let d), _) where d.isNaN: throw refusal(table.nanMessage(column.name))
        case (.real(let d), _) where !d.isFinite: throw refusal(table.infiniteMessage(column.name))
        case (.blob, _): throw refusal(table.blobMessage(column.name))
        case (.integer, .integer), (.real, .real), (.text, .text): return value
        default: break
        }
        do {
            let converted = try connection.scalar("SELECT " + table.storedValue("?1", column, in: .query), [value])
            if case .real(let d) = converted, !d.isFinite { throw refusal(table.infiniteMessage(column.name)) }
            return converted
        } catch let error as SQLiteError where error.extendedCode == SQLiteError.constraintDatatype {
            throw refusal(error.message)
        }
    }

    /// `value` as `column` of `table` stores it when a migration changes the column's type
    /// (``of(_:column:table:on:)``), text read as a real correctly rounded, as JSON, Swift and
    /// PostgreSQL's setup of the same change read it: SQLite 3.40's `CAST` is off by an ulp for
    /// some decimals (`'9091.409267'`).
    /// - Throws: as ``of(_:column:table:on:)``.
    static func convertedForTypeChange(_ value: DatabaseValue, column: ColumnSchema, table: TableSchema, on connection: Connection) throws -> DatabaseValue {
        let converted = try of(value, column: column, table: table, on: connection)
        if column.type == .real, case .real = converted, case .text(let text) = value, let exact = Double(NumberText.trimmed(text)) {
            return .real(exact)
        }
        return converted
    }
}
