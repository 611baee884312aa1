import Foundation

/// The values a migration writes into one column: computed from the user's SQL over a view
/// (``compute(_:where:over:into:of:onlyChanged:in:)``), or converted from the stored values of
/// a column whose type changed, and written into the stored JSON by the write rule of the
/// column's type (``TableSchema/storedValue(_:_:in:checkingText:)``): a value the column would
/// refuse refuses the migration, naming its row.
enum MigrationValues {
    /// The temporary table holding computed values until ``write(_:of:queue:in:)``.
    static let table = "ps_migration_values"
    private static let values = "temp." + table
    /// The temporary view a computation reads, `source`'s columns with the data table's rowid.
    private static let sourceViewName = "ps_migration_source"
    private static let sourceView = "temp." + sourceViewName

    /// Evaluates `expression` for each row of `source`'s view matching `condition`, as
    /// `column` of `table` stores it, into the temporary table (by the data table's rowid); with
    /// `onlyChanged`, only rows whose value differs from the view's current one.
    ///
    /// The expression is evaluated once per row, over a temporary view that reads like
    /// `source`'s with the data table's rowid beside (the write rule, which reads its argument
    /// up to four times, runs over the stored result); the rows are then written in rowid order.
    /// - Throws: ``TandemError/invalidSQL(sql:reason:)`` for an expression or condition that is
    ///   not one SQL expression; ``TandemError/invalidValue(_:)`` naming the first row whose
    ///   value the column refuses.
    static func compute(
        _ expression: String, where condition: String?, over source: TableSchema, into column: ColumnSchema, of table: TableSchema,
        onlyChanged: Bool, storedKey: (String) -> String = { $0 }, in tx: Transaction
    ) throws {
        let filter = "(\(condition ?? "1"))"
        let select = "SELECT id, (\(expression)) FROM \(source.quotedName) WHERE \(filter)"
        // The user's SQL, checked as the user's (one statement, Tandem's tables protected)
        // before it is spliced into Tandem's own statement in the same place.
        _ = try tx.connection.asUser { try tx.connection.prepare(select) }
        let names = (["id"] + source.columns.map(\.name)).map(SQLText.identifier).joined(separator: ", ")
        let extracts = (["d.id"] + source.columns.map { source.extract(ColumnSchema(name: storedKey($0.name), type: $0.type), from: "d.data") })
            .joined(separator: ", ")
        let old = source.columns.contains { $0.name == column.name } ? SQLText.identifier(column.name) : "NULL"
        try tx.executeOwn(
            """
            DROP VIEW IF EXISTS \(sourceView); CREATE TEMP VIEW \(sourceViewName)(ps_rowid, \(names)) AS SELECT d.rowid, \(extracts) FROM \(source.quotedDataTable) AS d;
            DROP TABLE IF EXISTS \(values); CREATE TEMP TABLE \(Self.table)(rid INTEGER PRIMARY KEY, v, o);
            INSERT INTO \(values)(rid, v, o) SELECT ps_rowid, (\(expression)), \(old) FROM \(sourceView) AS \(source.quotedName) WHERE \(filter);
            DROP VIEW \(sourceView)
            """)
        do {
            try tx.executeOwn("UPDATE \(values) SET v = \(table.storedValue("v", column, in: .query))")
        } catch let error as SQLiteError where error.refusal != nil {
            try refusedRow(select, column: column, of: table, in: tx)
            throw error
        }
        if onlyChanged {
            try tx.executeOwn("DELETE FROM \(values) WHERE (\(table.storedDiffers("v", from: "o", column))) IS NOT 1")
        }
    }

    /// Throws the refusal of the first row of `select` (id, value) whose value `column` refuses, naming the row.
    private static func refusedRow(_ select: String, column: ColumnSchema, of table: TableSchema, in tx: Transaction) throws {
        for row in try tx.connection.asUser({ try tx.fetchAll(select) }) {
            do {
                _ = try StoredValue.of(row[1], column: column, table: table, on: tx.connection)
            } catch TandemError.invalidValue(var refusal) {
                refusal.rowID = row[0].stringValue
                refusal.message += " (row \(SQLText.literal(row[0].stringValue ?? "\(row[0])")))"
                throw TandemError.invalidValue(refusal)
            }
        }
    }

    /// Writes the computed values into `table`'s stored rows (and, with `queue`, a PATCH entry
    /// per row into the upload queue); returns how many rows.
    static func write(_ column: ColumnSchema, of table: TableSchema, queue: Bool, moving: StoredKeyMoves = StoredKeyMoves(), in tx: Transaction) throws -> Int {
        defer { try? tx.executeOwn("DROP TABLE IF EXISTS \(values)") }
        let path = SQLText.literal("$." + column.name)
        let value = { (row: String) in jsonValue("(SELECT \(jsonText("f.v", column, of: table)) FROM \(values) AS f WHERE f.rid = \(row))", column) }
        let rowid = "\(table.quotedDataTable).rowid"
        let written: Int
        if moving.isEmpty {
            try tx.executeOwn(
                "UPDATE \(table.quotedDataTable) SET data = json_set(coalesce(data, '{}'), \(path), \(value(rowid))) WHERE rowid IN (SELECT rid FROM \(values))")
            written = Int(try tx.scalar("SELECT changes()").int64Value ?? 0)
        } else {
            // The renames waiting for the table and the fill, in one pass over every row.
            let filled = moving.applied(to: "data", adding: [(path, value(rowid))])
            try tx.executeOwn(
                "UPDATE \(table.quotedDataTable) SET data = CASE WHEN rowid IN (SELECT rid FROM \(values)) THEN \(filled) ELSE \(moving.applied(to: "data")) END WHERE json_valid(data)"
            )
            written = Int(try tx.scalar("SELECT count(*) FROM \(values)").int64Value ?? 0)
        }
        if queue {
            try tx.executeOwn(
                """
                INSERT INTO ps_crud(id, tx_id, data) SELECT \(InternalTables.nextCrudID) - 1 + row_number() OVER (ORDER BY d.id), \(InternalTables.nextTransactionID),
                json_object('op', 'PATCH', 'type', ?, 'id', d.id, 'data', json_object(?, \(value("d.rowid")))) FROM \(values) AS g JOIN \(table.quotedDataTable) AS d ON d.rowid = g.rid ORDER BY d.id;
                \(InternalTables.seedLastCrudID)
                """, [table.name, column.name])
        }
        return written
    }

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
