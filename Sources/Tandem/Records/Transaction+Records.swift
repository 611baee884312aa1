import Foundation

/// Records inside a read or write transaction. Every write goes through the table's view, so it
/// is captured for upload exactly as SQL writes are.
extension Transaction {
    /// The records `query` selects, in its order.
    /// - Throws: ``TandemError/invalidRecord(_:)`` for a type that does not fit its table or a row
    ///   that does not decode; ``SQLiteError``.
    public func fetch<R: Record>(_ query: RecordQuery<R> = RecordQuery<R>()) throws -> [R] {
        let layout = try checkedLayout(R.self)
        let plan = try RecordSQL.make(query, layout: layout)
        var records = try decodeRecords(R.self, rows: try rows(plan), layout: layout)
        if plan.filterInSwift, let predicate = query.predicate { records = try records.filter { try predicate.evaluate($0) } }
        if plan.sortInSwift {
            if !query.sortBy.isEmpty { records.sort(using: query.sortBy) }
            records = Array(records.dropFirst(query.offset).prefix(query.limit ?? .max))
        }
        return records
    }

    /// The record with this id, or nil.
    public func fetch<R: Record>(_ type: R.Type, id: String) throws -> R? {
        let layout = try checkedLayout(R.self)
        let rows = try fetchAll("SELECT * FROM \(SQLText.identifier(layout.tableName)) WHERE id = ?", [id])
        return try decodeRecords(R.self, rows: rows, layout: layout).first
    }

    /// How many records `query` selects (`SELECT count(*)`; limit and offset apply).
    /// - Throws: ``TandemError/invalidRecord(_:)`` naming a predicate expression that has no SQL form.
    public func count<R: Record>(_ query: RecordQuery<R> = RecordQuery<R>()) throws -> Int {
        let layout = try checkedLayout(R.self)
        let matching = try translated(RecordQuery(query.predicate), layout: layout, columns: "id").select
        let total = Int(try scalar("SELECT count(*) FROM (\(matching.text))", matching.arguments).int64Value ?? 0)
        return max(0, min(query.limit ?? .max, total - query.offset))
    }

    /// The ids `query` selects, in its order (a sort that does not translate to SQL sorts the
    /// records in Swift, as ``fetch(_:)`` does).
    /// - Throws: ``TandemError/invalidRecord(_:)`` naming a predicate expression that has no SQL form.
    public func ids<R: Record>(_ query: RecordQuery<R> = RecordQuery<R>()) throws -> [String] {
        let layout = try checkedLayout(R.self)
        let plan = try translated(query, layout: layout, columns: "id")
        if plan.sortInSwift && !query.sortBy.isEmpty { return try fetch(query).map(\.id) }
        return try rows(plan).compactMap { $0[0].stringValue }
    }

    /// Inserts `record`; an empty id is minted as a lowercase UUID. Returns the record as stored.
    /// - Throws: ``SQLiteError`` when a row with this id exists (see ``upsert(_:)``).
    @discardableResult
    public func insert<R: Record>(_ record: R) throws -> R {
        try insert(contentsOf: CollectionOfOne(record))[0]
    }

    /// Inserts many records in this transaction; returns them as stored. Captured for upload
    /// exactly as inserts through the table's view are, written by
    /// ``insert(into:columns:rows:)`` (many rows per statement).
    /// - Throws: ``SQLiteError`` when a row with one of the ids exists; ``TandemError/invalidRecord(_:)``
    ///   for a record that does not encode as its table's columns.
    @discardableResult
    public func insert<R: Record, S: Sequence<R>>(contentsOf records: S) throws -> [R] {
        if isReadOnly { throw TandemError.readOnly(path: connection.path) }
        let layout = try checkedLayout(R.self)
        var stored: [R] = []
        let rows = try records.map { record in
            var record = record
            if record.id.isEmpty { record.id = UUID().uuidString.lowercased() }
            stored.append(record)
            return try columnValues(of: record, layout: layout)
        }
        try insert(into: layout.tableName, columns: ["id"] + layout.columns.map(\.name), rows: rows)
        return stored
    }

    /// Writes `record` over the stored row with its id. Only the columns whose values changed
    /// are written, and queued as one PATCH entry with just them.
    /// - Throws: ``TandemError/invalidRecord(_:)`` when no row has the record's id (a saved
    ///   record's id cannot change).
    public func update<R: Record>(_ record: R) throws {
        let layout = try checkedLayout(R.self)
        guard try updateRow(record, layout: layout) else {
            throw TandemError.invalidRecord("no \(layout.tableName) row has id '\(record.id)'; a record's id cannot change (insert it instead)")
        }
    }

    /// Updates the row with the record's id, or inserts the record when there is none.
    @discardableResult
    public func upsert<R: Record>(_ record: R) throws -> R {
        let layout = try checkedLayout(R.self)
        if !record.id.isEmpty, try updateRow(record, layout: layout) { return record }
        return try insert(record)
    }

    /// Deletes the record with this id; returns whether there was one.
    @discardableResult
    public func delete<R: Record>(_ type: R.Type, id: String) throws -> Bool {
        let layout = try checkedLayout(R.self)
        // Writes through a view's INSTEAD OF trigger do not count in `changes`: count first.
        let table = SQLText.identifier(layout.tableName)
        let exists = try scalar("SELECT count(*) FROM \(table) WHERE id = ?", [id]).int64Value == 1
        try execute("DELETE FROM \(table) WHERE id = ?", [id])
        return exists
    }

    /// Deletes the records `predicate` selects; returns how many.
    /// - Throws: ``TandemError/invalidRecord(_:)`` naming a predicate expression that has no SQL form.
    @discardableResult
    public func delete<R: Record>(_ type: R.Type, where predicate: Predicate<R>) throws -> Int {
        let layout = try checkedLayout(R.self)
        let ids = try translated(RecordQuery(predicate), layout: layout, columns: "id").select
        let matching = Int(try scalar("SELECT count(*) FROM (\(ids.text))", ids.arguments).int64Value ?? 0)
        try execute("DELETE FROM \(SQLText.identifier(layout.tableName)) WHERE id IN (\(ids.text))", ids.arguments)
        return matching
    }

    // MARK: Helpers

    private func updateRow<R: Record>(_ record: R, layout: RecordLayout) throws -> Bool {
        let values = try columnValues(of: record, layout: layout)
        guard !layout.columns.isEmpty else {
            return try scalar("SELECT count(*) FROM \(SQLText.identifier(layout.tableName)) WHERE id = ?", [record.id]).int64Value == 1
        }
        let sets = layout.columns.map { "\(SQLText.identifier($0.name)) = ?" }.joined(separator: ", ")
        let exists = try scalar("SELECT count(*) FROM \(SQLText.identifier(layout.tableName)) WHERE id = ?", [record.id]).int64Value == 1
        guard exists else { return false }
        try execute("UPDATE \(SQLText.identifier(layout.tableName)) SET \(sets) WHERE id = ?", Array(values.dropFirst()) + [values[0]])
        return true
    }

    /// `[id, column…]` in layout order; a column the record encodes nothing for is NULL.
    private func columnValues<R: Record>(of record: R, layout: RecordLayout) throws -> [DatabaseValue] {
        let encoded = try RecordEncoder.columns(of: record)
        return [.text(record.id)] + layout.columns.map { encoded[$0.name] ?? .null }
    }

    /// The plan of `query`, whose predicate must translate to SQL.
    private func translated<R: Record>(_ query: RecordQuery<R>, layout: RecordLayout, columns: String) throws -> RecordSQL {
        let plan = try RecordSQL.make(query, layout: layout, columns: columns)
        if plan.filterInSwift, let predicate = query.predicate {
            do { _ = try PredicateContext(layout: layout, predicate: predicate).translate(predicate.expression) } catch let error as Untranslatable {
                throw TandemError.invalidRecord("\(layout.typeName): \(error.description); count, ids and delete need an SQL predicate")
            }
        }
        return plan
    }

    /// The layout of `R`, checked once per connection against the table the file declares.
    func checkedLayout<R: Record>(_ type: R.Type) throws -> RecordLayout {
        let layout = try RecordLayout.of(R.self)
        if connection[CheckedRecordTypes.self].contains(layout.typeName) { return layout }
        try layout.check(against: try SchemaInstaller.storedSchema(self), path: connection.path)
        connection[CheckedRecordTypes.self].insert(layout.typeName)
        do {
            for relation in layout.relations { _ = try checkedLayout(relation.target) }
        } catch {
            connection[CheckedRecordTypes.self].remove(layout.typeName)
            throw error
        }
        return layout
    }
}

/// The record types a connection checked against its file's schema (see `checkedLayout`).
enum CheckedRecordTypes: ConnectionAttachmentKey {
    static var defaultValue: Set<String> { [] }
}
