import Foundation

/// The to-one relationships of a list of rows, loaded with one query per relationship (no N+1),
/// one level deep.
struct RelatedRecords {
    /// Relationship property → related id (its bytes: Swift's `String` equality would take two
    /// ids SQLite keeps apart, `é` and `e` with a combining accent, for one) → the related record.
    var records: [String: [ExactText: any Record]] = [:]
    /// Every related row loaded, in load order.
    var rows: [Row] = []
    /// Relationship column → related id (its bytes) → its row.
    private var rowsByID: [String: [ExactText: Row]] = [:]

    /// Loads the records `rows` refer to through `layout`'s relationships.
    static func load(for rows: [Row], layout: RecordLayout, in tx: Transaction) throws -> RelatedRecords {
        var loaded = RelatedRecords()
        for relation in layout.relations {
            guard let index = rows.first?.columns.firstIndex(of: relation.column) else { continue }
            var ids: [String] = []
            var seen = Set<ExactText>()
            for row in rows {
                if let id = row.values[index].stringValue, seen.insert(ExactText(id)).inserted { ids.append(id) }
            }
            let (records, targetRows) = try tx.records(relation.target, ids: ids)
            loaded.records[relation.property] = records
            loaded.rows += targetRows
            loaded.rowsByID[relation.column] = Dictionary(
                targetRows.compactMap { row in row["id"]?.stringValue.map { (ExactText($0), row) } }, uniquingKeysWith: { a, _ in a })
        }
        return loaded
    }
}

extension RelatedRecords {
    /// The related rows of `rows` (some of those they were loaded for), relationship by
    /// relationship, in the rows' order: what those records show of other tables.
    func rows(relatedTo rows: [Row]) -> [Row] {
        rowsByID.sorted { $0.key < $1.key }.flatMap { column, byID in
            rows.compactMap { $0[column]?.stringValue.flatMap { byID[ExactText($0)] } }
        }
    }

    /// Records of `R` from `rows` of its table, their relationships taken from these.
    func decode<R: Record>(_ type: R.Type, rows: [Row], layout: RecordLayout) throws -> [R] {
        try rows.map { try RecordDecoder.decode(R.self, from: $0, layout: layout, related: records) }
    }
}

extension Transaction {
    /// Records of `R` from rows of its table, with their to-one relationships loaded.
    func decodeRecords<R: Record>(_ type: R.Type, rows: [Row], layout: RecordLayout) throws -> [R] {
        try RelatedRecords.load(for: rows, layout: layout, in: self).decode(R.self, rows: rows, layout: layout)
    }

    /// The records of `T` with these ids (their own relationships not loaded), by id.
    fileprivate func records<T: Record>(_ type: T.Type, ids: [String]) throws -> ([ExactText: any Record], [Row]) {
        let layout = try checkedLayout(T.self)
        var records: [ExactText: any Record] = [:]
        let rows = try fetchAll(from: layout.tableName, where: "id", in: ids)
        for row in rows {
            let record = try RecordDecoder.decode(T.self, from: row, layout: layout)
            records[ExactText(record.id)] = record
        }
        return (records, rows)
    }
}
