import CSQLite
import Foundation

/// Inserts many rows into a declared table the way its view's INSERT trigger does (the data
/// table row, and a PUT entry in the upload queue under the open upload transaction id), but
/// with the JSON built in Swift (``RowJSON``) and up to ``batch`` rows per statement, instead
/// of running the trigger once per row. Same values, same CRUD entries: `BulkInsertTests`
/// compares both paths value by value (an 18-digit real's text can differ in its last digits:
/// the C library's correctly rounded digits against SQLite's `printf`, the same double).
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
        idSource = index["id"]
        columnNames = columns
        var name = RowJSON()
        name.append(string: table.name)
        nameJSON = name.bytes
        keys = RowJSON.keys(of: table)
    }

    /// Inserts `rows`; returns their ids in order.
    /// - Throws: ``TandemError/invalidArguments(_:)`` for a row of the wrong length or a bad id;
    ///   ``TandemError/invalidValue(_:)`` for a value its column refuses (``StoredValue``), with
    ///   the row's id; ``SQLiteError`` (a duplicate id named in the table's terms).
    func insert(_ rows: some Sequence<[DatabaseValue]>, on connection: Connection) throws -> [String] {
        var batch = Batch(transactionID: try connection.counter(.nextTransaction) ?? 1, nextEntryID: try UploadQueueRows.nextID(on: connection))
        var ids: [String] = []
        for row in rows {
            let idStart = batch.arena.bytes.count
            let id: String, dataStart: Int
            do {
                id = try self.id(of: row)
                batch.arena.append(utf8Of: id)
                dataStart = batch.arena.bytes.count
                do {
                    try appendJSON(of: row, to: &batch.arena, on: connection)
                } catch TandemError.invalidValue(var refusal) {
                    // The row's id when the caller gave it (a minted one names no row).
                    if !(idSource.map { row[$0] } ?? .null).isNull { refusal.rowID = id }
                    throw TandemError.invalidValue(refusal)
                }
            } catch {
                // The rows before this one first, as the view would have written them: a
                // duplicate id among them is the error the view would have reported.
                batch.arena.truncate(to: idStart)
                if !batch.ids.isEmpty { try flush(&batch, rowsSoFar: ids.count, on: connection) }
                throw error
            }
            ids.append(id)
            batch.ids.append(.text(id))
            let dataEnd = batch.arena.bytes.count
            batch.data.append((idStart..<dataStart, dataStart..<dataEnd))
            if !table.localOnly {
                let entryStart = batch.arena.bytes.count
                batch.arena.append(raw: "{\"op\":\"PUT\",\"type\":")
                batch.arena.append(raw: nameJSON)
                batch.arena.append(raw: ",\"id\":")
                batch.arena.append(string: id)
                batch.arena.append(raw: ",\"data\":")
                batch.arena.append(copyOf: dataStart..<dataEnd)
                batch.arena.append(raw: "}")
                batch.entries.append(entryStart..<batch.arena.bytes.count)
            }
            if batch.ids.count == Self.batch { try flush(&batch, rowsSoFar: ids.count, on: connection) }
        }
        if !batch.ids.isEmpty { try flush(&batch, rowsSoFar: ids.count, on: connection) }
        return ids
    }

    /// One statement's worth of rows: their texts in one buffer, bound from it in place.
    private struct Batch {
        let transactionID: Int64
        /// The id of the batch's first CRUD entry (see ``InternalTables/nextCrudID``).
        var nextEntryID: Int64
        var arena = RowJSON(capacity: 64 * 1024)
        /// Per row: the id's bytes and the data JSON's bytes in `arena`.
        var data: [(id: Range<Int>, json: Range<Int>)] = []
        /// Per row: the CRUD entry's bytes in `arena`.
        var entries: [Range<Int>] = []
        /// The ids, for an error that names one.
        var ids: [DatabaseValue] = []

        mutating func clear() {
            arena.removeAll()
            data.removeAll(keepingCapacity: true)
            entries.removeAll(keepingCapacity: true)
            ids.removeAll(keepingCapacity: true)
        }
    }

    /// The row's id: given, or minted as the trigger does for NULL.
    private func id(of row: [DatabaseValue]) throws -> String {
        guard row.count == columnNames.count else {
            throw TandemError.invalidArguments("a row for \(table.name) has \(row.count) value(s) for \(columnNames.count) column(s) (\(columnNames.joined(separator: ", ")))")
        }
        switch idSource.map({ row[$0] }) ?? .null {
        case .null: return UUID().uuidString.lowercased()
        case .text(let text) where !text.isEmpty: return text
        case .integer(let number): return String(number)
        default: throw TandemError.invalidArguments("\(table.name).id must be a non-empty text")
        }
    }

    /// The row's data JSON: every column, in the table's order, as the trigger's `json_object`
    /// writes them (each value as the column stores it, ``StoredValue``).
    private func appendJSON(of row: [DatabaseValue], to json: inout RowJSON, on connection: Connection) throws {
        json.append(raw: "{")
        for (offset, source) in sources.enumerated() {
            if offset > 0 { json.append(raw: ",") }
            json.append(raw: keys[offset])
            let value = source.map { row[$0] } ?? .null
            json.append(try StoredValue.of(value, column: table.columns[offset], table: table, on: connection))
        }
        json.append(raw: "}")
    }

    /// Writes the batch; `rowsSoFar` counts the rows of the call up to its end, for errors.
    private func flush(_ batch: inout Batch, rowsSoFar: Int, on connection: Connection) throws {
        let values = Array(repeating: "(?, ?)", count: batch.ids.count).joined(separator: ", ")
        let entryValues = Array(repeating: "(?, ?, ?)", count: batch.entries.count).joined(separator: ", ")
        let transient = tandem_sqlite_transient()
        do {
            try batch.arena.bytes.withUnsafeBufferPointer { arena in
                let text = { (statement: OpaquePointer, index: Int, range: Range<Int>) -> Int32 in
                    guard range.count <= Int(Int32.max) else { return SQLITE_TOOBIG }
                    return arena.baseAddress!.advanced(by: range.lowerBound).withMemoryRebound(to: CChar.self, capacity: range.count) {
                        sqlite3_bind_text(statement, Int32(index), $0, Int32(range.count), transient)
                    }
                }
                if !table.insertOnly {
                    try connection.withCachedStatement("INSERT INTO \(table.quotedDataTable)(id, data) VALUES \(values)") { statement in
                        try statement.run(described: batch.ids) { handle in
                            for (row, spans) in batch.data.enumerated() {
                                let rc = text(handle, 2 * row + 1, spans.id)
                                if rc != SQLITE_OK { return rc }
                                let rc2 = text(handle, 2 * row + 2, spans.json)
                                if rc2 != SQLITE_OK { return rc2 }
                            }
                            return SQLITE_OK
                        }
                    }
                }
                if !table.localOnly {
                    try connection.withCachedStatement("INSERT INTO \(InternalTables.crud)(id, tx_id, data) VALUES \(entryValues)") { statement in
                        try statement.run(described: batch.ids) { handle in
                            for (row, entry) in batch.entries.enumerated() {
                                var rc = sqlite3_bind_int64(handle, Int32(3 * row + 1), batch.nextEntryID + Int64(row))
                                if rc == SQLITE_OK { rc = sqlite3_bind_int64(handle, Int32(3 * row + 2), batch.transactionID) }
                                if rc == SQLITE_OK { rc = text(handle, 3 * row + 3, entry) }
                                if rc != SQLITE_OK { return rc }
                            }
                            return SQLITE_OK
                        }
                    }
                }
            }
        } catch let error as SQLiteError {
            // In the user's terms: their table and columns, not the data table and JSON arguments.
            // The failed statement left none of the batch's rows, so name the id as the view,
            // writing row by row, would have: the first row whose id an earlier row of the batch
            // or a row already in the table has.
            var message = error.message
            if error.code == .constraint, !table.insertOnly, let id = firstDuplicate(batch.ids, on: connection) {
                message = ConstraintMessage.duplicate(id: id, table: table.name)
            }
            throw SQLiteError(extendedCode: error.extendedCode, message: message, sql: statementDescription(rows: rowsSoFar), path: error.path)
        }
        batch.nextEntryID += Int64(batch.entries.count)
        // The counter covers every committed batch, also when a later one fails and the caller
        // catches the error and commits.
        if !batch.entries.isEmpty { try connection.execute(InternalTables.recordLastCrudID) }
        batch.clear()
    }

    /// The first of `ids` that repeats an earlier one (byte for byte, as SQLite compares text)
    /// or is the id of a row in the data table; only looked for after a failure, so the common
    /// case pays for no set of ids.
    private func firstDuplicate(_ ids: [DatabaseValue], on connection: Connection) -> String? {
        var seen = Set<ExactText>()
        for case .text(let id) in ids {
            if !seen.insert(ExactText(id)).inserted { return id }
            let stored = try? connection.scalar("SELECT 1 FROM \(table.quotedDataTable) WHERE id = ?", [.text(id)])
            if stored?.int64Value == 1 { return id }
        }
        return nil
    }

    /// The insert as the user would have written it, for errors.
    private func statementDescription(rows: Int) -> String {
        "INSERT INTO \(table.quotedName)(\(columnNames.map(SQLText.identifier).joined(separator: ", "))) VALUES … (\(rows) \(rows == 1 ? "row" : "rows"))"
    }
}
