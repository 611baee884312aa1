import Foundation

/// One row change from the backend: the row's full state after a server transaction, its
/// deletion, or the removal of every row of a table.
public struct ServerChange: Sendable, Hashable, Codable {
    /// PUT carries the row's whole state; DELETE removes it; TRUNCATE removes every row of the
    /// table (`rowID` is empty), as PostgreSQL's `TRUNCATE` did on the server.
    public enum Operation: String, Sendable, Codable { case put = "PUT", delete = "DELETE", truncate = "TRUNCATE" }
    /// What happened to the row.
    public let op: Operation
    /// The table's schema name (`notes`).
    public let table: String
    /// The row's id.
    public let rowID: String
    /// The row's columns as a JSON object text (PUT only).
    public let data: String?

    /// A change; `data` is a JSON object text for PUT and nil for DELETE.
    public init(op: Operation, table: String, rowID: String, data: String?) {
        self.op = op
        self.table = table
        self.rowID = rowID
        self.data = data
    }
}

/// A batch of changes and the cursor after it.
///
/// A client fetches batches until ``hasMore`` is false and applies them together, in one local
/// transaction: a backend may page one server batch (a full sync, say) over several.
public struct ChangeBatch: Sendable, Hashable {
    /// The changes, oldest first, whole server transactions only.
    public let changes: [ServerChange]
    /// The cursor to store once the batch is applied.
    public let nextCursor: String
    /// True when more changes follow right away.
    public let hasMore: Bool
    /// Set when this batch starts a full sync, with the reason (a first sync, a server restored
    /// from a dump, a cursor behind the compacted change log): the batches up to the one whose
    /// ``hasMore`` is false hold every row the server has, so the client first drops its synced
    /// rows that have no pending upload (pending uploads are kept and still sent).
    public let fullSyncReason: String?

    /// A batch and the cursor after it.
    public init(changes: [ServerChange], nextCursor: String, hasMore: Bool, fullSyncReason: String? = nil) {
        self.changes = changes
        self.nextCursor = nextCursor
        self.hasMore = hasMore
        self.fullSyncReason = fullSyncReason
    }
}
