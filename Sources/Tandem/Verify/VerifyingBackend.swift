import Foundation

/// A backend that can show a client, without sending it the rows, whether the client holds the
/// server's rows: ``DatabaseSync/verify(with:repair:tables:)`` compares checksums of each synced
/// table (``RowChecksum``, over ``RowDigest``'s canonical encoding) at the table, then per bucket
/// of ids, then per row of the buckets that differ, and fetches rows only to repair them.
///
/// Every call reads the rows of `table` that the caller may see (a scoped role: its slice) as
/// the server holds them now, with the client's declared columns (`table.columns`, which the
/// calls take sorted by name). Calls need no sync ownership and change nothing on the server.
public protocol VerifyingBackend: SyncBackend {
    /// The checksum of each non-empty bucket of `table`'s rows, ids bucketed by
    /// ``RowDigest/bucket(of:)`` among `bucketCount` (a power of two; 1 for the whole table).
    func checksums(of table: TableSchema, bucketCount: Int) throws -> [Int: RowChecksum]

    /// The digest of every row of `table` in the `buckets` (of `bucketCount`).
    func rowDigests(of table: TableSchema, bucketCount: Int, buckets: [Int]) throws -> [RowDigest]

    /// Which of `ids` of `table` the server changed after the download cursor `cursor` (the
    /// client's stored one): their rows may differ from the client's only because the client has
    /// not downloaded the change yet. Every id when the table was emptied after it (TRUNCATE).
    /// Ids are compared by their bytes, as SQLite and PostgreSQL compare them (not by Swift's
    /// `String` equality, under which `é` and `e` with a combining accent are one id).
    /// - Throws: ``TandemError/verificationFailed(_:)`` when `cursor` is not a settled cursor of
    ///   this backend's current history (a full sync is due: verify after it).
    func changed(after cursor: String, table: String, ids: [String]) throws -> [String]

    /// The rows `ids` of `table` as the server holds them now, each as the JSON object a PUT
    /// carries (``ServerChange/data``); an id the server does not hold (or this role may not
    /// see) is absent.
    func rows(of table: TableSchema, ids: [String]) throws -> [(id: String, data: String)]
}

extension TableSchema {
    /// The declared columns in the order of the canonical encoding (``RowDigest``): by their
    /// names' UTF-8 bytes.
    public var verifiedColumns: [ColumnSchema] {
        columns.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }
}
