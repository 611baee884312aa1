import Foundation

/// The stored values of a column whose declared type changed that do not convert to the new
/// type exactly: those the column would refuse if they were written now (the write rule,
/// ``StoredValue``), such as `"abc"` or `2.5` in a column made `integer`, or 2^53 + 1 in one
/// made `real`. A column keeps its stored values across a type change and reads them as the new
/// type, so these read differently than they were written.
enum InexactValues {
    /// How many examples an effect names.
    static let examples = 5

    /// The effect naming `column`'s inexact values in `table` (stored as `stored` declared it),
    /// or nil when every value converts exactly.
    static func find(of column: ColumnSchema, in table: TableSchema, stored: TableSchema, in tx: Transaction) throws -> SchemaUpgrade.Effect? {
        guard try tx.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [stored.dataTableName]).int64Value == 1 else { return nil }
        let path = SQLText.literal("$." + column.name)
        // Values already of the new type (or NULL) read as they are: only the others are converted.
        let rows = try tx.connection.fetchAll(
            """
            SELECT id, \(TableSchema.text("data", path: path)) FROM \(stored.quotedDataTable)
            WHERE json_type(data, \(path)) NOT IN ('null', \(SQLText.literal(column.type.rawValue))) ORDER BY id
            """)
        var count = 0
        var named: [String] = []
        for row in rows {
            let value = row[1]
            do {
                _ = try StoredValue.of(value, column: column, table: table, on: tx.connection)
            } catch is TandemError {
                count += 1
                if named.count < examples { named.append("row \(SQLText.literal(row[0].stringValue ?? "")): \(shown(value))") }
            }
        }
        return count == 0 ? nil : .valuesReadInexactly(table: table.name, column: column.name, type: column.type, rows: count, examples: named)
    }

    private static func shown(_ value: DatabaseValue) -> String {
        switch value {
        case .text(let text): JSONValue.string(text.count > 40 ? String(text.prefix(40)) + "…" : text).jsonText
        case .real(let real): JSONValue.double(real).jsonText
        case .integer(let integer): String(integer)
        default: "\(value)"
        }
    }
}
