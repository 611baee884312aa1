import Foundation

extension SharedDatabase {
    /// The rows of `table` as a JSON array of objects, ordered by id, that
    /// ``importJSON(_:into:options:)`` takes back unchanged (importing it changes nothing): every
    /// column, NULL as null, reals with a fraction or exponent (`2.0`), integers without.
    /// - Parameters:
    ///   - filter: an SQL condition on the table's columns (`done = 0`), or nil for every row.
    ///   - keys: column names as they are, or in camelCase.
    /// - Throws: ``TandemError/invalidSchema(_:)`` for a table that is not declared; ``SQLiteError``
    ///   for a condition that does not prepare.
    public func exportJSON(table: String, where filter: String? = nil, keys: KeyStyle = .snake) throws -> Data {
        guard let declared = schema.table(named: table) else {
            throw TandemError.invalidSchema("'\(table)' is not a declared table (declared: \(schema.tables.map(\.name).joined(separator: ", ")))")
        }
        let columns = ["id"] + declared.columns.map(\.name)
        let sql = "SELECT \(columns.map(SQLText.identifier).joined(separator: ", ")) FROM \(SQLText.identifier(table))"
            + (filter.map { " WHERE \($0)" } ?? "") + " ORDER BY id"
        let rows = try fetchAll(sql)
        var text = "["
        for (index, row) in rows.enumerated() {
            if index > 0 { text += "," }
            text += "{"
            for (position, column) in columns.enumerated() {
                if position > 0 { text += "," }
                JSONValue.writeString(keys == .camel ? KeyConvention.camel(column) : column, to: &text)
                text += ":" + JSONValue(row[position]).jsonText
            }
            text += "}"
        }
        return Data((text + "]").utf8)
    }
}

extension JSONValue {
    /// A column value as JSON: NULL as null, blobs as base64 text.
    init(_ value: DatabaseValue) {
        switch value {
        case .null: self = .null
        case .integer(let i): self = .integer(i)
        case .real(let d): self = d.isFinite ? .double(d) : .null
        case .text(let s): self = .string(s)
        case .blob(let data): self = .string(data.base64EncodedString())
        }
    }
}
