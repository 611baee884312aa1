import Foundation

/// Records in one transaction each, on any database (``SharedDatabase``, ``InMemoryDatabase``);
/// see ``Transaction`` for the same calls inside a transaction.
extension DatabaseReader {
    /// The records `query` selects (a read transaction).
    public func fetch<R: Record>(_ query: RecordQuery<R> = RecordQuery<R>()) throws -> [R] {
        try read { try $0.fetch(query) }
    }

    /// The records of `R` matching `predicate`, sorted.
    public func fetch<R: Record>(_ type: R.Type, where predicate: Predicate<R>? = nil, sortBy: [SortDescriptor<R>] = []) throws -> [R] {
        try fetch(RecordQuery(predicate, sortBy: sortBy))
    }

    /// The record with this id, or nil.
    public func fetch<R: Record>(_ type: R.Type, id: String) throws -> R? {
        try read { try $0.fetch(type, id: id) }
    }

    /// `SELECT count(*)` of `query`.
    public func count<R: Record>(_ query: RecordQuery<R> = RecordQuery<R>()) throws -> Int {
        try read { try $0.count(query) }
    }

    /// The ids `query` selects, in its order (its predicate must translate to SQL).
    public func ids<R: Record>(_ query: RecordQuery<R> = RecordQuery<R>()) throws -> [String] {
        try read { try $0.ids(query) }
    }

    /// The records of `R` whose reference column (`keyPath`, a to-one `…_id` property) holds
    /// one of `ids`, grouped by that id: related records for a whole list in one query.
    public func fetchRelated<R: Record>(_ type: R.Type, by keyPath: KeyPath<R, String?> & Sendable, in ids: [String]) throws -> [String: [R]] {
        try read { tx in
            let layout = try tx.checkedLayout(R.self)
            let column = try layout.column(for: keyPath)
            let rows = try tx.fetchAll(from: layout.tableName, where: column, in: ids)
            return Dictionary(grouping: try tx.decodeRecords(R.self, rows: rows, layout: layout)) { $0[keyPath: keyPath] ?? "" }
        }
    }
}

/// Records written in one write transaction each.
extension DatabaseWriter {
    /// Inserts `record` (minting an empty id) and returns it as stored.
    @discardableResult
    public func insert<R: Record>(_ record: R) throws -> R {
        try write { try $0.insert(record) }
    }

    /// Inserts many records in one write transaction.
    @discardableResult
    public func insert<R: Record, S: Sequence<R>>(contentsOf records: S) throws -> [R] {
        try write { try $0.insert(contentsOf: records) }
    }

    /// Writes the columns of `record` that changed (one PATCH entry with them).
    public func update<R: Record>(_ record: R) throws {
        try write { try $0.update(record) }
    }

    /// Updates the row with the record's id, or inserts it.
    @discardableResult
    public func upsert<R: Record>(_ record: R) throws -> R {
        try write { try $0.upsert(record) }
    }

    /// Deletes the record with this id.
    @discardableResult
    public func delete<R: Record>(_ type: R.Type, id: String) throws -> Bool {
        try write { try $0.delete(type, id: id) }
    }

    /// Deletes the records `predicate` selects (it must translate to SQL).
    @discardableResult
    public func delete<R: Record>(_ type: R.Type, where predicate: Predicate<R>) throws -> Int {
        try write { try $0.delete(type, where: predicate) }
    }
}
