import Foundation

/// Verification (``VerifyingBackend``) against the server file: its rows are read as a client's
/// view shows them (the same JSON, the same expressions), in one read transaction per call.
extension EmbeddedBackend: VerifyingBackend {
    public func checksums(of table: TableSchema, bucketCount: Int) throws -> [Int: RowChecksum] {
        var buckets: [Int: RowChecksum] = [:]
        if bucketCount == 1 {
            // The whole table: the rows' own hashes only, not their ids'.
            var total = RowChecksum()
            try forEachRow(of: table) { id, values in
                let (first, second) = try RowDigest.valueHash(id: id, values: values)
                total.add(first, second)
            }
            return total.count == 0 ? [:] : [0: total]
        }
        try forEachRow(of: table) { id, values in
            let digest = try RowDigest(id: id, values: values)
            buckets[digest.bucket(of: bucketCount), default: RowChecksum()].add(digest)
        }
        return buckets
    }

    public func rowDigests(of table: TableSchema, bucketCount: Int, buckets: [Int]) throws -> [RowDigest] {
        let wanted = Set(buckets)
        var digests: [RowDigest] = []
        try forEachRow(of: table) { id, values in
            guard wanted.contains(Int(try RowDigest.idHash(of: id) & UInt32(bucketCount - 1))) else { return }
            digests.append(try RowDigest(id: id, values: values))
        }
        return digests
    }

    /// The ids among `ids` with a change logged after the version `cursor`.
    public func changed(after cursor: String, table: String, ids: [String]) throws -> [String] {
        guard !cursor.isEmpty else { throw TandemError.verificationFailed("the client has not synced with \(database.path) yet") }
        let after = try parse(cursor)
        return try database.read { tx in
            try tx.fetchAll(
                "SELECT DISTINCT id FROM server_changes WHERE version > ? AND type = ? AND hex(id) IN (SELECT value FROM json_each(?))",
                [after, table, Self.hexList(ids)]
            ).compactMap { $0[0].stringValue }
        }
    }

    public func rows(of table: TableSchema, ids: [String]) throws -> [(id: String, data: String)] {
        try database.read { tx in
            try tx.fetchAll(
                "SELECT id, data FROM server_rows WHERE type = ? AND hex(id) IN (SELECT value FROM json_each(?))", [table.name, Self.hexList(ids)]
            ).compactMap { row in
                guard let id = row[0].stringValue, let data = row[1].stringValue else { return nil }
                return (id, data)
            }
        }
    }

    /// Each row of `table` on the server: its id and its declared columns' values, as a client's view shows them.
    private func forEachRow(of table: TableSchema, _ body: (String, [DatabaseValue]) throws -> Void) throws {
        let values = table.verifiedColumns.map { table.viewedValueSQL(of: $0, fromJSON: "data") }
        try database.read { tx in
            try tx.forEachRow("SELECT \((["id"] + values).joined(separator: ", ")) FROM server_rows WHERE type = ?", [table.name]) { row in
                try body(row[0].stringValue ?? "", Array(row.values.dropFirst()))
            }
        }
    }

    /// `ids` as a JSON array of their UTF-8 bytes in upper-case hexadecimal (SQLite's `hex`):
    /// SQLite's JSON functions end text at an escaped NUL, which an id may hold.
    private static func hexList(_ ids: [String]) -> String {
        JSONValue.array(ids.map { id in .string(id.utf8.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined()) }).jsonText
    }
}
