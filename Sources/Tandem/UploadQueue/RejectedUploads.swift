import Foundation

extension UploadQueue {
    /// The transactions the backend refused for good, oldest first (see ``RejectedTransaction``).
    public func rejected() throws -> [RejectedTransaction] {
        try database.read { try RejectedUploadRows.all(in: $0) }
    }

    /// Queues transactions that were set aside again, at the end of the upload queue (once the
    /// reason is fixed: a server constraint dropped, a column widened), each under a new
    /// transaction id.
    /// - Parameter transactionID: the one to retry; nil for every one.
    /// - Returns: how many transactions were queued again.
    /// - Throws: ``TandemError/readOnly(path:)`` on a read-only database.
    @discardableResult
    public func retryRejected(transactionID: Int64? = nil) throws -> Int {
        try database.write { try RejectedUploadRows.requeue(transactionID, in: $0) }
    }

    /// Drops transactions that were set aside, for good: the backend never receives them. Their
    /// rows may still hold what they wrote here (a file that has not synced since), so the next
    /// sync is a full sync, which gives every synced row without a pending upload the server's
    /// state again (``SyncEvent/fullSync(reason:)``).
    /// - Parameter transactionID: the one to drop; nil for every one.
    /// - Returns: how many CRUD entries were dropped.
    /// - Throws: ``TandemError/readOnly(path:)`` on a read-only database.
    @discardableResult
    public func discardRejected(transactionID: Int64? = nil) throws -> Int {
        try database.write { tx in
            let dropped = try RejectedUploadRows.discard(transactionID, in: tx)
            if dropped > 0 { try tx.removeStored(.cursor) }
            return dropped
        }
    }
}

extension SharedDatabase {
    /// Sets `transaction` aside with the backend's `error`, fenced like every sync write, and
    /// asks for a full sync (the stored cursor removed), which gives its rows the server's state
    /// again: a host shows what the server holds, and the refused change waits in the set-aside
    /// list until it is retried or discarded.
    func setAside(_ transaction: CrudTransaction, error: String, epoch: Int64) throws {
        try write { tx in
            try Fence.check(tx, epoch: epoch)
            try RejectedUploadRows.setAside(transaction, error: error, in: tx)
            try tx.removeStored(.cursor)
        }
    }
}
