/// Thrown by a backend's upload that answers for each transaction of a batch and took some
/// while refusing others for good (a connector's API says which): the sync pass completes the
/// applied ones and sets aside the refused ones with their reasons, in the batch's order, up to
/// the first transaction with neither answer, instead of sending the batch again one
/// transaction at a time. What is left uploads again later (an idempotent backend answers
/// `applied` for what it took already); `retry` then ends the pass, to be retried with backoff.
public struct PartialUpload: Error, Sendable {
    /// The transaction ids the backend applied (or had applied before).
    public var applied: Set<Int64>
    /// The transaction ids it refused for good, each with its reason.
    public var refused: [Int64: String]
    /// Why the first transaction with neither answer is to be tried again; nil when every
    /// transaction has one.
    public var retry: (any Error)?

    public init(applied: Set<Int64>, refused: [Int64: String], retry: (any Error)?) {
        self.applied = applied
        self.refused = refused
        self.retry = retry
    }
}
