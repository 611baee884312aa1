import Foundation

/// One row change from the backend: the row's full state after a server transaction, or its deletion.
public struct ServerChange: Sendable, Hashable, Codable {
    /// PUT carries the row's whole state; DELETE removes it.
    public enum Operation: String, Sendable, Codable { case put = "PUT", delete = "DELETE" }
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
public struct ChangeBatch: Sendable, Hashable {
    /// The changes, oldest first, whole server transactions only.
    public let changes: [ServerChange]
    /// The cursor to store once the batch is applied.
    public let nextCursor: String
    /// True when more changes follow right away.
    public let hasMore: Bool

    /// A batch and the cursor after it.
    public init(changes: [ServerChange], nextCursor: String, hasMore: Bool) {
        self.changes = changes
        self.nextCursor = nextCursor
        self.hasMore = hasMore
    }
}
