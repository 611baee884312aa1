import Foundation

/// The values of a column whose type a migration changes, converted from the stored values
/// (and pending uploads') by the write rule of the column's new type
/// (``TableSchema/storedValue(_:_:in:checkingText:)``): a value that does not convert refuses the
/// migration, naming its row. Values computed from the user's SQL are ``MigrationFill``'s.
enum MigrationValues {
    /// The temporary table of a fill's values computed before they are written (``MigrationFill``),
    /// which older releases kept in the file (``LayoutCheck`` knows it).
    static let table = "ps_migration_values"

    /// Converts the stored values of `column` (of `table`, declared with its new type) that are
    /// of another type, by the write rule; returns how many rows changed.
    /// - Throws: ``TandemError/invalidSchema(_:)`` (``SchemaProblem/Kind/typeMismatch``) naming the
    ///   first row whose value does not convert exactly.
    static func convertStored(_ column: ColumnSchema, of table: TableSchema, in tx: Transaction) throws -> Int {
        let values = try StoredRowCheck.otherTypedValues(of: column, in: table, tx: tx)
        let update = "UPDATE \(table.quotedDataTable) SET data = json_set(data, ?2, \(jsonValue(jsonText("?1", column, of: table), column))) WHERE id = ?3"
        for value in values {
            guard let converted = value.converted else {
                throw TandemError.invalidSchema(
                    SchemaProblem(
                        .typeMismatch, table: table.name, column: column.name, row: value.id.stringValue,
                        "\(table.name).\(column.name): \(value.shown) does not convert to \(column.type.rawValue) exactly (give the conversion with using, or rewrite the row first)"
                    ))
            }
            try tx.executeOwn(update, [converted, "$." + column.name, value.id])
        }
        return values.count
    }

    /// Converts the values of `column` in pending uploads of `table` (queued or set aside) that
    /// convert exactly by the write rule, and leaves the others as written; returns how many
    /// entries changed.
    static func convertPending(_ column: ColumnSchema, of table: TableSchema, in tx: Transaction) throws -> Int {
        let path = SQLText.literal("$.data." + column.name)
        var count = 0
        for queue in [InternalTables.crud, InternalTables.rejected] {
            guard try tx.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [queue]).int64Value == 1 else { continue }
            let rows = try tx.fetchAll(
                """
                SELECT id, \(TableSchema.text("data", path: path)) FROM \(queue)
                WHERE json_valid(data) AND data ->> '$.type' = ? AND json_type(data, \(path)) NOT IN ('null', ?)
                """, [table.name, column.type.rawValue])
            for row in rows {
                // A value that does not convert uploads as it was written: the server decides, and
                // a refusal sets it aside with the server's reason, as for any upload.
                guard let converted = try? StoredValue.convertedForTypeChange(row[1], column: column, table: table, on: tx.connection) else { continue }
                try tx.executeOwn(
                    "UPDATE \(queue) SET data = json_set(data, ?2, \(jsonValue(jsonText("?1", column, of: table), column))) WHERE id = ?3",
                    [converted, "$.data." + column.name, row[0]])
                count += 1
            }
        }
        return count
    }

    /// `x` as the JSON text of the value `column` stores (a real as its exact literal: SQLite's
    /// JSON functions print 15 digits), or as it is for the other types.
    private static func jsonText(_ x: String, _ column: ColumnSchema, of table: TableSchema) -> String {
        guard column.type == .real else { return x }
        return "(CASE WHEN \(x) IS NULL THEN 'null' ELSE \(table.realLiteral(x, column: column, in: .query)) END)"
    }

    /// What `json_set` is given for a ``jsonText(_:_:of:)``: a real's text read as JSON.
    private static func jsonValue(_ text: String, _ column: ColumnSchema) -> String {
        column.type == .real ? "json(\(text))" : text
    }
}
