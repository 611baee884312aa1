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
        let refused = try StoredRowCheck.otherTypedValues(of: column, in: table, dataTable: stored.quotedDataTable, tx: tx).filter { $0.converted == nil }
        guard !refused.isEmpty else { return nil }
        return .valuesReadInexactly(table: table.name, column: column.name, type: column.type, rows: refused.count, examples: refused.prefix(examples).map(\.shown))
    }
}
