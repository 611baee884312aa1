/// What the sync owner and a backend reset read and change of the upload queue, beside the
/// public ``UploadQueue`` API: the queue's rows are ``UploadQueueRows``' (Layout/), and every
/// use of them outside the database's own write path goes through here.
extension UploadQueue {
    /// The ids of the queue's first and last entries (nil, nil: empty), in one snapshot.
    func bounds() throws -> (head: Int64?, last: Int64?) {
        try database.read { tx in (try UploadQueueRows.firstID(in: tx), try UploadQueueRows.lastID(in: tx)) }
    }

    /// The id of the queue's first entry, nil when it is empty.
    func head() throws -> Int64? {
        try database.read { try UploadQueueRows.firstID(in: $0) }
    }

    /// Whether `change` may have changed the queue (an unknown change may have).
    static func isChanged(by change: DatabaseChange) -> Bool {
        change.isUnknown || change.rawTables.contains(InternalTables.crud)
    }

    /// The id of the queue's last entry, nil when it is empty.
    func last() throws -> Int64? {
        try database.read { try UploadQueueRows.lastID(in: $0) }
    }

    /// Whether the queue is empty.
    func isEmpty() throws -> Bool {
        try database.read { try UploadQueueRows.isEmpty(in: $0) }
    }

    /// The number of entries queued, read in `tx`.
    static func count(in tx: Transaction) throws -> Int {
        try UploadQueueRows.count(in: tx)
    }

    /// Moves the ids of the entries from `first` on by `shift`, in `tx` (the owner's renumbering
    /// past a backend's highest transaction id).
    static func renumber(from first: Int64, by shift: Int64, in tx: Transaction) throws {
        try UploadQueueRows.renumber(from: first, by: shift, in: tx)
    }

    /// Empties the queue in `tx`.
    static func clear(in tx: Transaction) throws {
        try UploadQueueRows.clear(in: tx)
    }
}
