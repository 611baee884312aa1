import Foundation

/// Verification (``VerifyingBackend``) against the server file: its rows are read as a client's
/// view shows them (the same JSON, the same expressions), in one read transaction per call.
extension EmbeddedBackend: VerifyingBackend {
    public func checksums(of table: TableSchema, bucketCount: Int) throws -> [Int: RowChecksum] {
        var buckets: [Int: RowChecksum] = [:]
        try forEachDigest(of: table) { buckets[$0.bucket(of: bucketCount), default: RowChecksum()].add($0) }
        return buckets
    }

    public func rowDigests(of table: TableSchema, bucketCount: Int, buckets: [Int]) throws -> [RowDigest] {
        let wanted = Set(buckets)
        var digests: [RowDigest] = []
        try forEachDigest(of: table) { if wanted.contains($0.bucket(of: bucketCount)) { digests.append($0) } }
        return digests
    }

    /// The ids among `ids` with a change logged after the version `cursor`.
    public func changed(after cursor: String, table: String, ids: [String]) throws -> Set<String> {
        guard !cursor.isEmpty else { throw TandemError.verificationFailed("the client has not synced with \(database.path) yet") }
        let after = try parse(cursor)
        return try database.read { tx in
            Set(
                try tx.fetchAll(
                    "SELECT DISTINCT id FROM server_changes WHERE version > ? AND type = ? AND hex(id) IN (SELECT value FROM json_each(?))",
                    [after, table, Self.hexList(ids)]
                ).compactMap { $0[0].stringValue })
        }
    }

    public func rows(of table: TableSchema, ids: [String]) throws -> [String: String] {
        try database.read { tx in
            var rows: [String: String] = [:]
            for row in try tx.fetchAll(
                "SELECT id, data FROM server_rows WHERE type = ? AND hex(id) IN (SELECT value FROM json_each(?))", [table.name, Self.hexList(ids)])
            {
                if let id = row[0].stringValue, let data = row[1].stringValue { rows[id] = data }
            }
            return rows
        }
    }

    private func forEachDigest(of table: TableSchema, _ body: (RowDigest) throws -> Void) throws {
        let values = table.verifiedColumns.map { table.viewedValueSQL(of: $0, fromJSON: "data") }
        try database.read { tx in
            try tx.forEachRow("SELECT \((["id"] + values).joined(separator: ", ")) FROM server_rows WHERE type = ?", [table.name]) { row in
                try body(try RowDigest(id: row[0].stringValue ?? "", values: Array(row.values.dropFirst())))
            }
        }
    }

    /// `ids` as a JSON array of their UTF-8 bytes in upper-case hexadecimal (SQLite's `hex`):
    /// SQLite's JSON functions end text at an escaped NUL, which an id may hold.
    private static func hexList(_ ids: [String]) -> String {
        JSONValue.array(ids.map { id in .string(id.utf8.map { String(format: "%02X", $0) }.joined()) }).jsonText
    }
}
