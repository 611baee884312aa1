import Foundation
import Tandem

/// Verification (``VerifyingBackend``) computed by the server: each row's canonical encoding
/// (``RowDigest``) is built in SQL from the typed columns and hashed with PostgreSQL's `md5`,
/// so checksums and digests travel, never rows (except those a repair fetches). Row-level
/// security keeps a scoped role to its slice, as it does for every read.
///
/// Related documentation: https://www.postgresql.org/docs/15/functions-string.html (`md5`),
/// https://www.postgresql.org/docs/15/functions-binarystring.html (`encode`, and `float8send`,
/// the type's binary output function: its IEEE 754 bits, most significant byte first)
extension PostgresBackend: VerifyingBackend {
    public func checksums(of table: TableSchema, bucketCount: Int) throws -> [Int: RowChecksum] {
        let digests = Self.digestSelect(of: table, idHash: bucketCount != 1)
        let rows = try matchingSchema(of: table.name) { db in
            try db.execute(
                """
                SELECT \(bucketCount == 1 ? "0" : "id_hash & $1::bigint") AS bucket, count(*)::text, sum(first)::text, sum(second)::text
                FROM (\(digests)) AS tandem_digests GROUP BY 1
                """, bucketCount == 1 ? [] : [String(bucketCount - 1)])
        }
        var buckets: [Int: RowChecksum] = [:]
        for row in rows {
            guard let bucket = row[0].flatMap({ $0 }).flatMap({ Int($0) }), let count = row[1].flatMap({ $0 }).flatMap({ Int64($0) }),
                let first = row[2].flatMap({ $0 }).flatMap({ Int64($0) }), let second = row[3].flatMap({ $0 }).flatMap({ Int64($0) })
            else { throw PostgresError("\(name) answered a checksum query of \(table.name) with an unreadable row") }
            buckets[bucket] = RowChecksum(count: count, first: first, second: second)
        }
        return buckets
    }

    public func rowDigests(of table: TableSchema, bucketCount: Int, buckets: [Int]) throws -> [RowDigest] {
        guard !buckets.isEmpty else { return [] }
        let rows = try matchingSchema(of: table.name) { db in
            try db.execute(
                """
                SELECT id, id_hash::text, first::text, second::text FROM (\(Self.digestSelect(of: table))) AS tandem_digests
                WHERE id_hash & $1::bigint = ANY($2::bigint[])
                """, [String(bucketCount - 1), "{" + buckets.map(String.init).joined(separator: ",") + "}"])
        }
        return try rows.map { row in
            guard let hash = row[1].flatMap({ $0 }).flatMap({ UInt32($0) }), let first = row[2].flatMap({ $0 }).flatMap({ UInt32($0) }),
                let second = row[3].flatMap({ $0 }).flatMap({ UInt32($0) })
            else { throw PostgresError("\(name) answered a digest query of \(table.name) with an unreadable row") }
            return RowDigest(id: PostgresText.unescaped(row[0] ?? ""), idHash: hash, first: first, second: second)
        }
    }

    /// The ids among `ids` whose changes were logged by transactions the cursor's snapshot does
    /// not hold (every id, after a TRUNCATE of the table there).
    public func changed(after cursor: String, table: String, ids: [String]) throws -> [String] {
        guard !ids.isEmpty else { return [] }
        return try withConnection { db in
            let position = try PostgresFeed.position(on: db, name: name)
            let stored = PostgresCursor(cursor)
            if let reason = PostgresFeed.fullSyncReason(for: stored, text: cursor, at: position) {
                throw TandemError.verificationFailed("a full sync is due (\(reason)); verify after the next sync")
            }
            guard let settled = stored?.settled, stored?.target == nil, stored?.table == nil else {
                throw TandemError.verificationFailed("the client's cursor is in the middle of a download; verify after it ends")
            }
            let escaped = JSONValue.array(ids.map { .string(PostgresText.escaped($0)) }).jsonText
            let rows = try db.execute(
                """
                SELECT DISTINCT CASE WHEN op = 'TRUNCATE' THEN NULL ELSE id END FROM tandem_changes
                WHERE type = $1 AND xid >= $2::xid8 AND NOT pg_visible_in_snapshot(xid, $3::pg_snapshot)
                  AND (op = 'TRUNCATE' OR id = ANY(ARRAY(SELECT json_array_elements_text($4::json))))
                """, [table, String(settled.xmin), settled.text, escaped])
            if rows.contains(where: { ($0.first ?? nil) == nil }) { return ids }
            return rows.compactMap { $0.first ?? nil }.map(PostgresText.unescaped)
        }
    }

    public func rows(of table: TableSchema, ids: [String]) throws -> [(id: String, data: String)] {
        guard !ids.isEmpty else { return [] }
        let function = SQLText.identifier(PostgresSetup.objectName("tandem_row_", table.name))
        let escaped = JSONValue.array(ids.map { .string(PostgresText.escaped($0)) }).jsonText
        let rows = try matchingSchema(of: table.name) { db in
            try db.execute(
                "SELECT r.id, \(function)(r.*) FROM \(SQLText.identifier(table.name)) AS r WHERE r.id = ANY(ARRAY(SELECT json_array_elements_text($1::json)))",
                [escaped])
        }
        return try rows.compactMap { row in
            guard let id = row[0] ?? nil, let data = try PostgresText.unescapedRow(row[1] ?? nil) else { return nil }
            return (PostgresText.unescaped(id), data)
        }
    }

    /// Each row of `table` as `(id, id_hash, first, second)`: ``RowDigest``'s numbers, computed
    /// from its canonical encoding in SQL.
    /// Without `idHash`, `id_hash` is 0: a whole table's checksum needs no bucket.
    /// `body` on a connection, a server whose table does not match this host's declaration (no
    /// such table, column or type: the server's schema is newer or older) said in the host's terms.
    /// - Throws: ``PostgresError`` naming the table, with the remedy.
    private func matchingSchema<T>(of table: String, _ body: (PostgresConnection) throws -> T) throws -> T {
        do {
            return try withConnection { db, _ in try body(db) }
        } catch let error as PostgresError where ["42P01", "42703", "42883", "42804"].contains(error.sqlState ?? "") {
            throw PostgresError(
                "the server's table \(table) does not match this host's schema (\(error.message)): when the server's schema is newer, migrate this host to it; else run \(Remedy.setUpServer.apiTerms) with the current schema",
                sqlState: error.sqlState, remedy: .setUpServer)
        }
    }

    static func digestSelect(of table: TableSchema, idHash: Bool = true) -> String {
        func text(_ value: String) -> String { "'t' || octet_length(\(value)) || ':' || \(value)" }
        let values = table.verifiedColumns.map { column -> String in
            let value = "r.\(SQLText.identifier(column.name))"
            switch column.type {
            case .text: return "coalesce(\(text(value)), 'n')"
            case .integer: return "coalesce('i' || \(value)::text, 'n')"
            case .real: return "coalesce('r' || encode(float8send(\(value)::float8), 'hex'), 'n')"
            }
        }
        let row = ([text("r.id")] + values).joined(separator: " || ")
        func lane(_ hash: String, _ start: Int) -> String { "('x' || substr(\(hash), \(start), 8))::bit(32)::bigint" }
        return """
            SELECT id, \(idHash ? lane("id_md5", 1) : "0::bigint") AS id_hash, \(lane("row_md5", 1)) AS first, \(lane("row_md5", 9)) AS second
            FROM (SELECT r.id, \(idHash ? "md5(\(text("r.id")))" : "NULL::text") AS id_md5, md5(\(row)) AS row_md5
                  FROM \(SQLText.identifier(table.name)) AS r) AS tandem_rows
            """
    }
}
