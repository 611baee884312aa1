import Foundation

/// How far an export has written, handed to its progress callback.
public struct ExportProgress: Sendable, Equatable {
    /// Rows written so far.
    public var rows: Int
    /// The rows the export writes in all, when known (an export without a filter).
    public var totalRows: Int?

    public init(rows: Int, totalRows: Int?) {
        self.rows = rows
        self.totalRows = totalRows
    }
}

extension DatabaseReader {
    /// The rows of `table` as a JSON array of objects, ordered by id, that
    /// ``DatabaseWriter/importJSON(_:into:options:)`` takes back unchanged (importing it changes nothing): every
    /// column, NULL as null, reals with a fraction or exponent (`2.0`), integers without.
    /// ``exportJSON(table:where:keys:format:progress:to:)`` collected in memory.
    /// - Parameters:
    ///   - table: a declared table.
    ///   - filter: an SQL condition on the table's columns (`done = 0`), or nil for every row.
    ///   - keys: column names as they are, or in camelCase.
    /// - Throws: ``TandemError/invalidSchema(_:)`` for a table that is not declared; ``SQLiteError``
    ///   for a condition that does not prepare.
    public func exportJSON(table: String, where filter: String? = nil, keys: KeyStyle = .snake) throws -> Data {
        var data = Data()
        try exportJSON(table: table, where: filter, keys: keys) { data.append(contentsOf: $0) }
        if data.last == 0x0A { data.removeLast() }
        return data
    }

    /// Writes the rows of `table`, ordered by id, as JSON that ``DatabaseWriter/importJSON(from:into:options:progress:)``
    /// takes back unchanged, in pieces of about 64 KiB as they are read: memory stays bounded
    /// whatever the table's size. One read transaction: the rows are those of one moment while
    /// writers go on.
    ///
    /// ```swift
    /// let out = FileHandle(forWritingAtPath: "notes.json")!
    /// try db.exportJSON(table: "notes") { try out.write(contentsOf: Data($0)) }
    /// ```
    ///
    /// Every column is written, NULL as null, reals with a fraction or exponent (`2.0`),
    /// integers without, text with JSON's escapes; an array ends with a newline after its `]`.
    /// - Parameters:
    ///   - table: a declared table.
    ///   - filter: an SQL condition on the table's columns (`done = 0`), or nil for every row.
    ///   - keys: column names as they are, or in camelCase.
    ///   - format: one array, or one object per line (``PayloadFormat/ndjson``).
    ///   - progress: called on the exporting thread every 1,024 rows and after the last.
    ///   - output: takes each piece of the text; what it throws ends the export.
    /// - Returns: the number of rows written.
    /// - Throws: ``TandemError/invalidSchema(_:)`` for a table that is not declared; ``SQLiteError``
    ///   for a condition that does not prepare; what `output` throws.
    @discardableResult
    public func exportJSON(
        table: String, where filter: String? = nil, keys: KeyStyle = .snake, format: PayloadFormat = .array,
        progress: ((ExportProgress) -> Void)? = nil, to output: @escaping (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Int {
        guard let declared = schema.table(named: table) else {
            throw TandemError.invalidSchema(
                SchemaProblem(.unknownTable, table: table, "'\(table)' is not a declared table (declared: \(schema.tables.map(\.name).joined(separator: ", ")))"))
        }
        return try read { tx in
            var writer = ExportWriter(columns: ["id"] + declared.columns.map(\.name), keys: keys, format: format, output: output)
            let view = ExportView(table: declared, connection: tx.connection)
            if let filter {
                let statement = try view.rows(where: filter)
                while try statement.step() {
                    view.write(statement, to: &writer)
                    try writer.endRow()
                    if writer.rows & 1023 == 0 { progress?(ExportProgress(rows: writer.rows, totalRows: nil)) }
                }
            } else {
                let stored = StoredRows(table: declared, connection: tx.connection)
                let total = try progress.map { _ in Int(try stored.count()) }
                let statement = try stored.inIDOrder()
                var transcoder = StoredJSONTranscoder(table: declared)
                while try statement.step() {
                    guard let id = statement.textBytes(at: 0) else { continue }
                    if !transcoder.write(id: id, data: statement.textBytes(at: 1), dataIsNull: statement.isNull(at: 1), to: &writer) {
                        try view.writeRow(id: String(decoding: id, as: UTF8.self), to: &writer)
                    }
                    try writer.endRow()
                    if writer.rows & 1023 == 0 { progress?(ExportProgress(rows: writer.rows, totalRows: total)) }
                }
            }
            try writer.finish()
            progress?(ExportProgress(rows: writer.rows, totalRows: filter == nil ? writer.rows : nil))
            return writer.rows
        }
    }
}

/// Rows of a table as its view shows them, for filtered exports and for the stored rows an
/// export cannot read as the view would.
private struct ExportView {
    let table: TableSchema
    let connection: Connection

    private var columns: String { (["id"] + table.columns.map(\.name)).map(SQLText.identifier).joined(separator: ", ") }

    /// The rows matching `filter` (the user's SQL, judged as theirs), ordered by id.
    func rows(where filter: String) throws -> Statement {
        try connection.asUser {
            try connection.prepare("SELECT \(columns) FROM \(table.quotedName) WHERE \(filter) ORDER BY +id")
        }
    }

    /// The current row of `statement` (id, then every column).
    func write(_ statement: Statement, to writer: inout ExportWriter) {
        writer.beginRow()
        for index in 0...table.columns.count {
            writer.key(index)
            writer.append(statement.value(at: Int32(index)))
        }
    }

    /// The row `id` as the view shows it.
    func writeRow(id: String, to writer: inout ExportWriter) throws {
        try connection.withCachedStatement("SELECT \(columns) FROM \(table.quotedName) WHERE id = ?") { statement in
            try statement.bind([.text(id)])
            defer { statement.reset() }
            guard try statement.step() else {
                throw TandemError.invalidSchema(
                    SchemaProblem(.unreadableFile, table: table.name, row: id, "row '\(id)' of \(table.name) went missing during the export"))
            }
            write(statement, to: &writer)
        }
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
