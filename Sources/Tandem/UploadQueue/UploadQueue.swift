import Foundation

extension SharedDatabase {
    /// The database's upload queue: what its local writes queued for the backend.
    public var uploadQueue: UploadQueue { UploadQueue(database: self) }
}

/// The upload queue of a database (``SharedDatabase/uploadQueue``): every local write to a
/// synced table queues a CRUD entry, grouped by the local transaction that wrote it; the sync
/// owner uploads whole transactions, oldest first, and completes them. PowerSync's
/// `getCrudBatch`/`complete` are the model (https://docs.powersync.com/architecture/client-architecture).
public struct UploadQueue: Sendable {
    let database: SharedDatabase

    /// The number of CRUD entries waiting for upload.
    public func pendingCount() throws -> Int {
        try database.read { try UploadQueueRows.count(in: $0) }
    }

    /// The oldest whole local transaction in the upload queue, or nil when it is empty.
    public func next() throws -> CrudTransaction? {
        try transactions(limit: 1).first
    }

    /// Whole transactions from the head of the upload queue, oldest first, up to `limit` transactions.
    ///
    /// The transaction ids returned are sealed: when the last one is still the id that view
    /// triggers hand out (a client that does not close transactions, such as the `sqlite3` shell,
    /// wrote it), the id is moved on first, so no entry written later can join a transaction
    /// that is being uploaded.
    public func transactions(limit: Int) throws -> [CrudTransaction] {
        try transactions(limit: limit, entryLimit: .max)
    }

    /// ``transactions(limit:)`` from the first entry after entry id `after` on (the sync owner
    /// reads a batch ahead while the one before it is being uploaded), fewer when their entries
    /// reach `entryLimit` (the transaction that reaches it is the last).
    func transactions(after: Int64 = 0, limit: Int, entryLimit: Int) throws -> [CrudTransaction] {
        let (transactions, open) = try database.read { tx in
            (try UploadQueueRows.head(transactions: limit, entries: entryLimit, after: after, in: tx), try UploadQueueRows.isOpen(in: tx))
        }
        guard open, database.writer != nil else { return transactions }
        return try database.write { tx in
            try UploadQueueRows.seal(in: tx)
            return try UploadQueueRows.head(transactions: limit, entries: entryLimit, after: after, in: tx)
        }
    }

    /// Removes uploaded transactions from the queue, fenced like every other sync write: only
    /// the owner, with the epoch it was elected with, can do it, so no other process can drop
    /// queued writes while the owner uploads them.
    /// - Parameter transactions: the transactions uploaded, from the queue's head.
    /// - Parameter epoch: the owner's epoch (fencing token).
    /// - Throws: ``TandemError/staleEpoch(held:current:)`` when `epoch` is not the current one; nothing is removed.
    public func complete(_ transactions: [CrudTransaction], epoch: Int64) throws {
        try database.write { tx in
            try Fence.check(tx, epoch: epoch)
            try UploadQueueRows.complete(transactions, in: tx)
        }
    }
}
