import Foundation

extension DatabaseWriter {
    /// Syncs a JSON array of objects into `table`, SwiftSync-style, in one write transaction:
    /// ``importJSON(from:into:options:progress:)`` of bytes in memory.
    @discardableResult
    public func importJSON(_ data: Data, into table: String, options: ImportOptions = ImportOptions()) throws -> ImportResult {
        try importJSON(from: .data(data), into: table, options: options)
    }

    /// Syncs a payload of JSON objects into `table`, SwiftSync-style, in one write transaction,
    /// reading it as it goes: memory stays bounded whatever the payload's size (a payload larger
    /// than memory imports), and `progress` hears how far it has got.
    ///
    /// ```swift
    /// let result = try db.importJSON(from: .file("notes.ndjson"), into: "notes",
    ///                                options: ImportOptions(deleteMissing: true, format: .ndjson)) { progress in
    ///     print(progress.elements, "elements", progress.fractionRead ?? 0)
    /// }
    /// ```
    ///
    /// The payload is one JSON array of objects, or newline-delimited objects
    /// (``ImportOptions/format``). Keys map to columns by exact name, then by convention
    /// (`createdAt` ↔ `created_at`), after ``ImportOptions/keyMap``. An insert-only table keeps no
    /// local rows to compare with: every element is inserted (one PUT each, again at every import
    /// of it; the backend's PUT replaces the row, so the same payload gives the same rows), and
    /// ``ImportOptions/deleteMissing`` and ``ImportOptions/scope`` are refused for it. Each object
    /// needs a non-empty `id` (text or integer). New ids are inserted; rows whose mapped values
    /// differ are updated (only those columns, so each queues one minimal PATCH); equal rows are
    /// left alone (no CRUD entry); rows missing from the payload are deleted only with
    /// ``ImportOptions/deleteMissing``. Each value is the SQL value it spells (a string text, a
    /// number an integer or a real, a boolean 0 or 1 for an `integer` column, null NULL), stored
    /// by the rule every write path follows: converted only when exactly (`2.0` as 2 in an
    /// `integer` column, `"12"` as 12, `42` as `"42"` in a `text` column). A string for a `real`
    /// column may also be an ISO 8601 date and time (read whole: fractional seconds and zone
    /// offsets kept, a time without a zone taken as UTC), stored as seconds since 1970; what is
    /// neither a date nor a number is refused with the reason.
    ///
    /// A payload that does not fit (not an array of objects, a missing or duplicate id, a value
    /// of the wrong type, an unknown key with ``ImportOptions/strict``, text that is not JSON) is
    /// rejected whole with the first bad element's index and key, and nothing is written: the
    /// elements are written as they are read, in the one transaction, which then rolls back. So
    /// does an import that is interrupted (the process killed, the machine stopped): SQLite
    /// discards the transaction, whatever its size. The transaction holds Tandem's write lock
    /// from the first element to the last, so other writers wait for the import (and time out
    /// after their busy timeout): a payload from a slow pipe keeps them waiting as long.
    ///
    /// - Parameters:
    ///   - source: a file, a file descriptor (standard input) or bytes in memory.
    ///   - table: a declared table.
    ///   - options: how keys are matched, missing rows treated, and unknown keys taken.
    ///   - progress: called on the importing thread every 1,024 elements and after the last.
    /// - Throws: ``TandemError/invalidJSON(_:)`` for text that is not JSON, ``TandemError/invalidPayload(_:)`` for JSON that does not fit; ``TandemError/invalidSchema(_:)``
    ///   for a table that is not declared; ``SystemError`` when the source cannot be read; what a
    ///   write transaction throws.
    @discardableResult
    public func importJSON(
        from source: PayloadSource, into table: String, options: ImportOptions = ImportOptions(),
        progress: ((ImportProgress) -> Void)? = nil
    ) throws -> ImportResult {
        try importJSON(from: source, into: table, options: options, chunk: 1 << 20, progress: progress)
    }

    /// ``importJSON(from:into:options:progress:)`` reading `chunk` bytes at a time.
    func importJSON(
        from source: PayloadSource, into table: String, options: ImportOptions, chunk: Int,
        progress: ((ImportProgress) -> Void)?
    ) throws -> ImportResult {
        let declared = try importTable(table, options: options)
        let reader = try PayloadReader(source, chunk: chunk)
        return try write { tx in
            try ImportApplier.withImportCache(on: tx.connection) {
                try importElements(from: reader, into: declared, options: options, in: tx, progress: progress)
            }
        }
    }

    private func importElements(
        from reader: PayloadReader, into declared: TableSchema, options: ImportOptions, in tx: Transaction,
        progress: ((ImportProgress) -> Void)?
    ) throws -> ImportResult {
        var rows = try ImportRowReader(table: declared, schema: schema, options: options, parent: nil, on: tx.connection)
        let applier = try ImportApplier(table: declared, options: options, in: tx)
        var elements = PayloadElements(reader: reader, format: options.format)
        var flat = FlatElement()
        var count = 0
        while let element = try elements.next() {
            let bytes = UnsafeBufferPointer(reader.buffer)
            let row: ImportRow
            if flat.parse(bytes, element.start..<element.end), let fast = rows.row(from: flat, in: bytes) {
                row = fast
            } else {
                row = try rows.row(
                    parsing: UnsafeBufferPointer(rebasing: bytes[element.start..<element.end]),
                    at: element.place(options.format), path: "[\(element.index)]")
            }
            try applier.apply(row, position: element.index)
            count += 1
            if count & 1023 == 0, let progress {
                progress(ImportProgress(elements: count, bytesRead: reader.offset + Int64(element.end), totalBytes: reader.totalBytes))
            }
        }
        let result = try applier.finish()
        progress?(ImportProgress(elements: count, bytesRead: reader.bytesRead, totalBytes: reader.totalBytes))
        return result
    }

    /// ``importJSON(_:into:options:)`` of elements already parsed.
    func importElements(_ elements: [JSONValue], into table: String, options: ImportOptions) throws -> ImportResult {
        let declared = try importTable(table, options: options)
        return try write { tx in
            try ImportApplier.withImportCache(on: tx.connection) {
                let rows = try ImportRowReader(table: declared, schema: schema, options: options, parent: nil, on: tx.connection)
                let applier = try ImportApplier(table: declared, options: options, in: tx)
                for (index, element) in elements.enumerated() {
                    try applier.apply(try rows.row(from: element, at: "[\(index)]", path: "[\(index)]"), position: index)
                }
                return try applier.finish()
            }
        }
    }

    /// The declared table an import writes, once its options are checked against the schema.
    private func importTable(_ name: String, options: ImportOptions) throws -> TableSchema {
        guard let table = schema.table(named: name) else {
            throw TandemError.invalidSchema(
                SchemaProblem(.unknownTable, table: name, "'\(name)' is not a declared table (declared: \(schema.tables.map(\.name).joined(separator: ", ")))"))
        }
        try ImportPlan.checkKeyMap(options, table: table, schema: schema)
        try ImportPlan.checkInsertOnly(options, table: table, schema: schema)
        if let scope = options.scope, !table.columns.contains(where: { $0.name == scope.column }) {
            throw TandemError.invalidSchema(
                SchemaProblem(.unknownColumn, table: table.name, column: scope.column, "scope column '\(scope.column)' is not a column of \(table.name)"))
        }
        return table
    }
}

extension DatabaseWriter {
    /// ``importJSON(_:into:options:)`` for records: syncs `records` into their table with the
    /// same diff (new ids inserted, changed columns patched, equal rows untouched, missing rows
    /// deleted with ``ImportOptions/deleteMissing``).
    @discardableResult
    public func importRecords<R: Record>(_ records: [R], options: ImportOptions = ImportOptions()) throws -> ImportResult {
        let layout = try RecordLayout.of(R.self)
        let objects = try records.map { record -> JSONValue in
            var columns = try RecordEncoder.columns(of: record)
            for column in layout.columns where columns[column.name] == nil { columns[column.name] = .null }
            // As an insert refuses it: JSON (the payload form) would turn it into null.
            if let (column, _) = columns.first(where: { if case .real(let d) = $0.value { return !d.isFinite } else { return false } }) {
                throw TandemError.invalidValue(
                    ValueRefusal(
                        table: layout.tableName, column: column, rowID: record.id,
                        message: "\(layout.typeName).\(column) (row '\(record.id)'): an infinite real cannot be stored (JSON has no representation for it)"))
            }
            return .object(columns.mapValues(JSONValue.init))
        }
        return try importElements(objects, into: layout.tableName, options: options)
    }
}
