import Foundation

/// A local transaction the backend refused for good (a value its column cannot take, a
/// constraint, a permission), set aside from the upload queue so that later uploads and all
/// downloads go on. The next download is a full sync, which gives its rows the server's state
/// again: the refused change lives on here only. It stays until
/// ``UploadQueue/retryRejected(transactionID:)`` queues it again or
/// ``UploadQueue/discardRejected(transactionID:)`` drops it.
public struct RejectedTransaction: Sendable, Hashable {
    /// The transaction as it was queued.
    public var transaction: CrudTransaction
    /// The backend's reason, naming table, column and row where it said.
    public var error: String
    /// When it was set aside.
    public var rejectedAt: Date
}
