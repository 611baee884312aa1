import Foundation

/// Every stored row of the declared tables against the schema (`tandem check --full`): rows whose
/// JSON is malformed (every read of the table fails on it) or not an object, and column values of
/// another type than the column's. A value that converts to the column's type exactly (`12` text
/// in an integer column) is repairable: rewritten as the triggers would have stored it. One that
/// does not (`2.5` or `"abc"` in an integer column) is named with its row, for the user to
/// rewrite or delete. Rows written around the views (the `sqlite3` shell writing the storage
/// tables) are the only way to these.
enum StoredRowCheck {
    /// How many rows a finding names.
    static let named = 5

    static func findings(_ schema: Schema, in tx: Transaction) throws -> [LayoutFinding] {
        var found: [LayoutFinding] = []
        for table in schema.tables where !table.insertOnly {
            guard try tx.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [table.dataTableName]).int64Value == 1 else { continue }
            let data = table.quotedDataTable
            for (condition, what) in [
                ("data IS NULL OR NOT json_valid(data)", "malformed JSON, which makes every read of the table fail"),
                ("json_valid(data) AND json_type(data) <> 'object'", "JSON that is not an object"),
            ] {
                let ids = try tx.fetchAll("SELECT id FROM \(data) WHERE \(condition) ORDER BY id").map { SQLText.literal($0[0].stringValue ?? "\($0[0])") }
                guard !ids.isEmpty else { continue }
                found.append(
                    LayoutFinding(
                        "table \(table.name): \(count(ids.count, "stored row holds", "stored rows hold")) \(what) (\(list(ids))); delete \(ids.count == 1 ? "it" : "them") (DELETE FROM \(SQLText.identifier(table.name)) WHERE id = …) or restore a backup"
                    ))
            }
            for column in table.columns {
                let values = try otherTypedValues(of: column, in: table, tx: tx)
                let converted = values.filter { $0.converted != nil }, refused = values.filter { $0.converted == nil }
                if !converted.isEmpty {
                    found.append(
                        LayoutFinding(
                            "\(table.name).\(column.name): \(count(converted.count, "stored value is", "stored values are")) not stored as \(column.type.rawValue) (\(list(converted.map(\.shown))))",
                            repair: "\(table.name).\(column.name): stored \(count(converted.count, "value", "values")) as \(column.type.rawValue), as writes store them",
                            action: .convertStoredValues(table: table.name, column: column.name)))
                }
                if !refused.isEmpty {
                    found.append(
                        LayoutFinding(
                            "\(table.name).\(column.name) is \(column.type.rawValue): \(count(refused.count, "stored value does", "stored values do")) not convert to it exactly and \(refused.count == 1 ? "reads" : "read") differently (\(list(refused.map(\.shown)))); rewrite or delete \(refused.count == 1 ? "it" : "them")"
                        ))
                }
            }
        }
        return found
    }

    /// Rewrites the values of `column` of `table` that convert to its type exactly, as writes store them.
    static func convert(_ column: String, of table: TableSchema, in tx: Transaction) throws {
        guard let declared = table.columns.first(where: { $0.name == column }) else { return }
        let path = "$." + column
        for value in try otherTypedValues(of: declared, in: table, tx: tx) {
            guard let converted = value.converted else { continue }
            try tx.executeOwn("UPDATE \(table.quotedDataTable) SET data = json_set(data, ?, ?) WHERE id = ?", [path, converted, value.id])
        }
    }

    /// The values of `column` (of `table`, stored in `dataTable`, its own unless given) stored as
    /// another JSON type than its own (NULL aside), each with what the column stores for it (nil
    /// where it refuses it) and as a message shows it (`row 'id': value`).
    static func otherTypedValues(
        of column: ColumnSchema, in table: TableSchema, dataTable: String? = nil, tx: Transaction
    ) throws -> [(id: DatabaseValue, converted: DatabaseValue?, shown: String)] {
        let path = SQLText.literal("$." + column.name)
        let rows = try tx.fetchAll(
            """
            SELECT id, \(TableSchema.text("data", path: path)) FROM \(dataTable ?? table.quotedDataTable)
            WHERE json_valid(data) AND json_type(data) = 'object' AND json_type(data, \(path)) NOT IN ('null', \(SQLText.literal(column.type.rawValue)))
            ORDER BY id
            """)
        return try rows.map { row in
            let converted: DatabaseValue?
            do {
                converted = try StoredValue.convertedForTypeChange(row[1], column: column, table: table, on: tx.connection)
            } catch is TandemError {
                converted = nil
            }
            return (row[0], converted, "row \(SQLText.literal(row[0].stringValue ?? "\(row[0])")): \(shown(row[1]))")
        }
    }

    /// A stored value in a message: text quoted (cut at 40 characters), numbers as JSON writes them.
    private static func shown(_ value: DatabaseValue) -> String {
        switch value {
        case .text(let text): JSONValue.string(text.count > 40 ? String(text.prefix(40)) + "…" : text).jsonText
        case .real(let real): JSONValue.double(real).jsonText
        default: "\(value)"
        }
    }

    private static func count(_ n: Int, _ one: String, _ many: String) -> String { n == 1 ? "1 \(one)" : "\(n) \(many)" }

    private static func list(_ items: [String]) -> String {
        items.prefix(named).joined(separator: ", ") + (items.count > named ? ", and \(items.count - named) more" : "")
    }
}
