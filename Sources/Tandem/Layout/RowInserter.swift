import Foundation

/// Inserts many rows into a declared table the way its view's INSERT trigger does (the data
/// table row, and a PUT entry in the upload queue under the open upload transaction id), but
/// with the JSON built in Swift (``RowJSON``) and up to ``batch`` rows per statement, instead
/// of running the trigger once per row. Same rows, same CRUD entries: `BulkInsertTests`
/// compares both paths value by value.
struct RowInserter {
    /// Rows per INSERT statement; fewer statements is most of the gain.
    static let batch = 32

    let table: TableSchema
    /// For each of the table's columns, the index of its value in a given row (nil: NULL).
    private let sources: [Int?]
    private let idSource: Int?
    private let columnNames: [String]
    private let nameJSON: [UInt8]
    /// `"name":` of each column, ready to append.
    private let keys: [[UInt8]]
    /// Which columns are declared `real`.
    private let realColumns: [Bool]

    /// - Parameter columns: the names each row's values are for (`id` may be among them; a
    ///   missing id is minted as a lowercase UUID, as the trigger does).
    /// - Throws: ``TandemError/invalidArguments(_:)`` naming a column the table does not have, or
    ///   one given twice.
    init(table: TableSchema, columns: [String]) throws {
        self.table = table
        var index: [String: Int] = [:]
        for (offset, name) in columns.enumerated() {
            let known = name.lowercased() == "id" ? "id" : table.columns.first { $0.name.lowercased() == name.lowercased() }?.name
            guard let known else {
                throw TandemError.invalidArguments("table \(table.name) has no column named \(name)")
            }
            guard index.updateValue(offset, forKey: known) == nil else {
                throw TandemError.invalidArguments("column \(name) of table \(table.name) is given twice")
            }
        }
        sources = table.columns.map { index[$0.name] }
        realColumns = table.columns.map { $0.type == .real }
        idSource = index["id"]
        columnNames = columns
        var name = RowJSON()
        name.append(string: table.name)
        nameJSON = name.bytes
        keys = table.columns.map { column in
            var key = RowJSON()
            key.append(string: column.name)
            key.append(raw: ":")
            return key.bytes
        }
    }

    /// Inserts `rows`; returns their ids in order.
    /// - Throws: ``TandemError/invalidArguments(_:)`` for a row of the wrong length, a bad id, a
    ///   BLOB or an infinite real; ``SQLiteError`` (a duplicate id named in the table's terms).
    func insert(_ rows: some Sequence<[DatabaseValue]>, on connection: Connection) throws -> [String] {
        let transactionID = try connection.counter(.nextTransaction) ?? 1
        var ids: [String] = []
        var dataArguments: [DatabaseValue] = [], crudArguments: [DatabaseValue] = []
        dataArguments.reserveCapacity(2 * Self.batch)
        crudArguments.reserveCapacity(2 * Self.batch)
        var pending = 0
        for row in rows {
            let (id, data) = try json(of: row)
            ids.append(id)
            if !table.insertOnly { dataArguments += [.text(id), .text(data.text)] }
            if !table.localOnly {
                var entry = RowJSON(capacity: data.bytes.count + 64)
                entry.append(raw: "{\"op\":\"PUT\",\"type\":")
                entry.append(raw: nameJSON)
                entry.append(raw: ",\"id\":")
                entry.append(string: id)
                entry.append(raw: ",\"data\":")
                entry.append(raw: data.bytes)
                entry.append(raw: "}")
                crudArguments += [.integer(transactionID), .text(entry.text)]
            }
            pending += 1
            if pending == Self.batch {
                try flush(pending, &dataArguments, &crudArguments, on: connection)
                pending = 0
            }
        }
        if pending > 0 { try flush(pending, &dataArguments, &crudArguments, on: connection) }
        return ids
    }

    /// The row's id and its data JSON (every column, in the table's order, as the trigger's
    /// `json_object` writes them).
    private func json(of row: [DatabaseValue]) throws -> (String, RowJSON) {
        guard row.count == columnNames.count else {
            throw TandemError.invalidArguments("a row for \(table.name) has \(row.count) value(s) for \(columnNames.count) column(s) (\(columnNames.joined(separator: ", ")))")
        }
        let id: String
        switch idSource.map({ row[$0] }) ?? .null {
        case .null: id = UUID().uuidString.lowercased()
        case .text(let text) where !text.isEmpty: id = text
        case .integer(let number): id = String(number)
        default: throw TandemError.invalidArguments("\(table.name).id must be a non-empty text")
        }
        var data = RowJSON()
        data.append(raw: "{")
        for (offset, source) in sources.enumerated() {
            if offset > 0 { data.append(raw: ",") }
            data.append(raw: keys[offset])
            var value = source.map { row[$0] } ?? .null
            // As the view's REAL column hands an integer to the trigger: as a real.
            if case .integer(let number) = value, realColumns[offset] { value = .real(Double(number)) }
            try data.append(value, table: table.name, column: table.columns[offset].name)
        }
        data.append(raw: "}")
        return (id, data)
    }

    private func flush(_ count: Int, _ data: inout [DatabaseValue], _ crud: inout [DatabaseValue], on connection: Connection) throws {
        let values = Array(repeating: "(?, ?)", count: count).joined(separator: ", ")
        do {
            if !data.isEmpty {
                try connection.withCachedStatement("INSERT INTO \(table.quotedDataTable)(id, data) VALUES \(values)") { try $0.run(data) }
            }
            if !crud.isEmpty {
                try connection.withCachedStatement("INSERT INTO \(InternalTables.crud)(tx_id, data) VALUES \(values)") { try $0.run(crud) }
            }
        } catch let error as SQLiteError {
            // In the user's terms: their table and columns, not the data table and JSON arguments.
            let columns = columnNames.map(SQLText.identifier).joined(separator: ", ")
            throw SQLiteError(extendedCode: error.extendedCode, message: error.message,
                              sql: "INSERT INTO \(table.quotedName)(\(columns)) VALUES … (\(count) rows)", path: error.path)
        }
        data.removeAll(keepingCapacity: true)
        crud.removeAll(keepingCapacity: true)
    }
}
