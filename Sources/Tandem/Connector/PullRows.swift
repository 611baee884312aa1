import Foundation

/// A pull's payload read into rows (``PayloadPull``), and written as a download.
enum PullRows {
    struct Row {
        var id: String
        /// The row as Tandem's JSON: every declared column.
        var data: String
        /// The declared columns' values, in the schema's order, as the view shows them.
        var values: [DatabaseValue]
    }

    static func read(_ payload: Data, format: PayloadFormat, table: TableSchema, scope: PullScope?) throws -> [Row] {
        let text = String(decoding: payload, as: UTF8.self)
        var elements: [JSONValue] = []
        switch format {
        case .array:
            guard case .array(let items) = try parse(text, what: "the payload") else {
                throw TandemError.invalidPayload("the pull for \(table.name) is not a JSON array")
            }
            elements = items
        case .ndjson:
            for (number, line) in text.split(whereSeparator: \.isNewline).enumerated() where !line.allSatisfy(\.isWhitespace) {
                elements.append(try parse(String(line), what: "line \(number + 1)"))
            }
        }
        var seen = Set<ExactText>()
        return try elements.enumerated().map { index, element in
            guard case .object(let fields) = element else { throw TandemError.invalidPayload("element [\(index)] of the pull for \(table.name) is not an object") }
            let id: String
            switch fields["id"] {
            case .string(let text)?: id = text
            case .integer(let number)?: id = String(number)
            default: throw TandemError.invalidPayload("element [\(index)] of the pull for \(table.name) has no text id")
            }
            guard seen.insert(ExactText(id)).inserted else { throw TandemError.invalidPayload("element [\(index)]: id '\(id)' appears twice in the pull") }
            if let scope, fields[scope.column] != .string(scope.value) {
                throw TandemError.invalidPayload(
                    "element [\(index)] (id '\(id)'): \(scope.column) is \(fields[scope.column]?.jsonText ?? "missing"), outside the pull's scope \(scope.column) = '\(scope.value)'"
                )
            }
            var data: [String: JSONValue] = [:]
            var values: [DatabaseValue] = []
            for column in table.columns {
                let stored = try value(fields[column.name] ?? .null, of: column, element: index, id: id, table: table.name)
                data[column.name] = stored
                values.append(stored.databaseValue)
            }
            return Row(id: id, data: JSONValue.object(data).jsonText, values: values)
        }
    }

    private static func parse(_ text: String, what: String) throws -> JSONValue {
        do { return try JSONValue(parsing: text) } catch { throw TandemError.invalidPayload("\(what) of the pull is not JSON: \(error)") }
    }

    /// `value` as `column` stores it, or a refusal naming the element.
    private static func value(_ value: JSONValue, of column: ColumnSchema, element: Int, id: String, table: String) throws -> JSONValue {
        switch (column.type, value) {
        case (_, .null), (.text, .string), (.integer, .integer), (.real, .double): return value
        case (.real, .integer(let integer)) where Int64(exactly: Double(integer)) == integer: return .double(Double(integer))
        default:
            let kind = column.type == .text ? "text" : column.type == .integer ? "an integer" : "a number"
            throw TandemError.invalidPayload("element [\(element)] (id '\(id)'): column \(column.name) of \(table) takes \(kind), not \(value.jsonText)")
        }
    }

    /// Equal values, reals by their bits (`-0.0` is not `0.0`), text by its bytes.
    private static func same(_ a: [DatabaseValue], _ b: [DatabaseValue]) -> Bool {
        guard a.count == b.count else { return a.isEmpty && b.isEmpty }
        return zip(a, b).allSatisfy { x, y in
            switch (x, y) {
            case (.real(let p), .real(let q)): return p.bitPattern == q.bitPattern
            case (.text(let p), .text(let q)): return p.utf8.elementsEqual(q.utf8)
            default: return x == y
            }
        }
    }

    /// Writes `rows` as downloaded state: each row that is new or differs, then the deletion of
    /// the rows (within `scope`) the payload lacks; rows with pending edits are left alone.
    static func apply(_ rows: [Row], to table: TableSchema, scope: PullScope?, schema: Schema, in tx: Transaction) throws -> PullResult {
        var pendingRows: [RowKey: Int] = [:]
        for row in try ViewedRows.pending(in: tx) { pendingRows[row] = 1 }
        let applier = ChangeApplier(schema: schema, pending: pendingRows)
        var result = PullResult()
        let view = SQLText.identifier(table.name)
        let columns = table.columns.isEmpty ? "id" : table.columns.map { SQLText.identifier($0.name) }.joined(separator: ", ")
        var present = Set<[UInt8]>()
        for row in rows {
            present.insert(Array(row.id.utf8))
            if pendingRows[RowKey(table: table.name, id: row.id)] != nil {
                result.keptPending += 1
                continue
            }
            // Compared as the view shows the row (reals by their bits): an equal row is not written.
            let current = try tx.fetchOne("SELECT \(columns) FROM \(view) WHERE id = ?", [row.id])
            if let current, same(current.values, row.values) {
                result.unchanged += 1
                continue
            }
            try applier.apply([ServerChange(op: .put, table: table.name, rowID: row.id, data: row.data)], in: tx)
            if current == nil { result.inserted += 1 } else { result.updated += 1 }
        }
        var sql = "SELECT id FROM \(view)"
        var arguments: [any DatabaseValueConvertible] = []
        if let scope {
            sql += " WHERE \(SQLText.identifier(scope.column)) = ?"
            arguments = [scope.value]
        }
        let missing = try tx.fetchAll(sql, arguments).compactMap { $0[0].stringValue }.filter { !present.contains(Array($0.utf8)) }
        for id in missing {
            if pendingRows[RowKey(table: table.name, id: id)] != nil {
                result.keptPending += 1
                continue
            }
            try applier.apply([ServerChange(op: .delete, table: table.name, rowID: id, data: nil)], in: tx)
            result.deleted += 1
        }
        return result
    }
}
