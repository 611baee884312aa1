import Foundation

/// One upload-then-download pass of the owner, with every local write fenced by the epoch.
///
/// A pass uploads what was queued when it began (so a writer that keeps committing cannot hold
/// it in uploads for ever), for at most ``uploadTimeLimit``, then downloads. Downloads never
/// wait for an empty queue: a row with an entry still queued keeps its local state, because the
/// backend's answer to that entry (the row's state after it, which every client downloads)
/// comes later in the change log. The owner's loop runs the two halves itself
/// (``uploads()``, ``downloads(after:)``), leaving a download to a later pass when its
/// ``PassSchedule`` says so.
struct SyncPass {
    let database: SharedDatabase
    let backend: any SyncBackend
    let epoch: Int64
    let clientID: String
    /// Most transactions in one upload batch, and the entries past which a batch ends (with
    /// the transaction that reaches them): a backlog of large transactions goes up in batches
    /// whose changes the other clients download while the next one uploads.
    var uploadBatch = 1000, uploadBatchEntries = 1000
    var downloadBatch = 1000
    /// Most changes held in memory while fetching a backlog; a larger backlog is staged in
    /// `ps_download` and still applied in one transaction.
    var maximumApply = 10_000
    /// Longest a pass uploads before it downloads (nil: the whole queue as it was
    /// when the pass began). The sync engine bounds its passes, so that a backlog of many
    /// seconds' uploads (a busy writer) delays other clients' changes by about this much only:
    /// the next pass goes on uploading at once.
    var uploadTimeLimit: Duration?
    var onEvent: (SyncEvent) -> Void = { _ in }
    /// What the owner's loop keeps from pass to pass and hands this one when it begins.
    var carried = Carried()

    /// What the owner's loop keeps from pass to pass, given to each pass as it begins.
    struct Carried {
        /// The rows with queued entries (a new value reads the whole queue once).
        var pendingRows = PendingRows()
        /// Where the local side of an upload step (completing the batch before, reading the
        /// next) runs while the backend takes the current batch.
        var localWork = DispatchQueue(label: "tandem.upload-queue")
        /// The queue when the pass began, as the owner's loop read it anyway; nil: the pass reads
        /// it. A pass that starts with an empty queue then reads the queue no more: a commit
        /// during it wakes the loop for the next one.
        var queueAtStart: QueueAtStart?
    }

    /// The upload queue as read when a pass began.
    struct QueueAtStart {
        /// The last entry's id; nil: the queue was empty.
        var lastID: Int64?
    }

    struct Result {
        var transactions = 0, entries = 0, downloaded = 0
        /// Transactions the backend refused for good, set aside (``RejectedTransaction``).
        var setAside = 0
        /// Set when the download was a full sync, with the backend's reason.
        var fullSyncReason: String?
        /// Local writes arrived during the pass: run again soon.
        var moreToUpload = false
        /// When the download began (its first fetch came after), on the monotonic clock; nil:
        /// the pass has not downloaded.
        var downloadBegan: ContinuousClock.Instant?
    }

    /// Uploads, then downloads.
    func run() throws -> Result {
        var result = try uploads()
        try downloads(after: &result)
        return result
    }

    /// The first half of a pass: the uploads, with ``Result/moreToUpload`` set to whether
    /// entries remain queued after them.
    func uploads() throws -> Result {
        var result = Result()
        try upload(into: &result)
        result.moreToUpload = try queued()
        return result
    }

    /// The second half: the download, after which ``Result/moreToUpload`` is read again.
    func downloads(after result: inout Result) throws {
        result.downloadBegan = .now
        try download(into: &result)
        result.moreToUpload = try queued()
    }

    /// Whether entries are queued (no read when the pass began with an empty queue: a commit
    /// since wakes the loop for the next pass).
    private func queued() throws -> Bool {
        if let queueAtStart = carried.queueAtStart, queueAtStart.lastID == nil { return false }
        return try !database.uploadQueue.isEmpty()
    }

    /// Uploads the queue as it was when the pass began, in batches of whole transactions.
    ///
    /// While the backend takes one batch, the local side of the next step runs beside it on
    /// ``Carried/localWork``: the batch before is completed (removed from the queue) and the next one is
    /// read. A batch the backend has taken stays queued until then, and one that a crash leaves
    /// queued is uploaded again and skipped by the backend as a retry (the upload contract).
    func upload(into result: inout Result) throws {
        let last: Int64
        if let queueAtStart = carried.queueAtStart {
            last = queueAtStart.lastID ?? 0
        } else {
            last = try database.uploadQueue.last() ?? 0
        }
        guard last > 0 else { return }  // nothing was queued when the pass began
        let deadline = uploadTimeLimit.map { ContinuousClock.now + max(.zero, $0) }
        var renumberings = 0
        var batch = try database.uploadQueue.transactions(limit: uploadBatch, entryLimit: uploadBatchEntries)
        /// Uploaded, not yet completed.
        var taken: [CrudTransaction] = []
        defer { if !taken.isEmpty { try? completeTaken(taken, into: &result) } }
        while true {
            if let deadline, result.transactions + taken.count > 0, ContinuousClock.now >= deadline { break }
            guard let first = batch.first, first.entries.first.map({ $0.id <= last }) ?? false else { break }
            let (database, uploadBatch, uploadBatchEntries, epoch, previous) = (database, uploadBatch, uploadBatchEntries, epoch, taken)
            let after = batch.last?.lastEntryID ?? 0
            // A first batch shorter than a batch holds everything queued when it was read: what
            // follows it was queued since, after this pass began, so there is no work ahead (a
            // paced writer's upload then wakes no other thread).
            let whole = previous.isEmpty && batch.count < uploadBatch && batch.reduce(0, { $0 + $1.entries.count }) < uploadBatchEntries
            let ahead =
                whole
                ? nil
                : WorkAhead(on: carried.localWork) { () -> [CrudTransaction] in
                    if !previous.isEmpty { try database.uploadQueue.complete(previous, epoch: epoch) }
                    return try database.uploadQueue.transactions(after: after, limit: uploadBatch, entryLimit: uploadBatchEntries)
                }
            do {
                try backend.upload(batch, clientID: clientID, epoch: epoch)
            } catch {
                // The work ahead ends first. Had it failed, the batch before stays queued (the
                // defer completes it, or the next pass uploads it again as a retry) and the
                // backend's error ends the pass.
                if let ahead, (try? ahead.value()) == nil { throw error }
                try recordCompleted(&taken, into: &result)
                switch error {
                case let partial as PartialUpload:
                    try settle(batch, by: partial, into: &result)
                    if let retry = partial.retry { throw retry }
                    batch = try database.uploadQueue.transactions(limit: uploadBatch, entryLimit: uploadBatchEntries)
                    continue
                case TandemError.uploadRejected:
                    // One of them can never apply: find it, set it aside, and upload the others.
                    try uploadOneByOne(try database.uploadQueue.transactions(limit: uploadBatch, entryLimit: uploadBatchEntries), into: &result)
                    batch = try database.uploadQueue.transactions(limit: uploadBatch, entryLimit: uploadBatchEntries)
                    continue
                case TandemError.transactionConflict(_, let conflicting, let highest) where renumberings < 3:
                    renumberings += 1
                    try renumberQueue(from: conflicting, after: highest)
                    batch = try database.uploadQueue.transactions(limit: uploadBatch, entryLimit: uploadBatchEntries)
                    continue
                case TandemError.staleEpoch(let held, let current) where held == epoch && current > epoch:
                    // The backend saw a newer epoch for this client from a copy of this file (a
                    // restored backup). Raise the local epoch to it: this owner steps down and the
                    // next election (this process offers again) starts above the backend's.
                    try database.write { tx in
                        try Fence.check(tx, epoch: epoch)
                        try tx.store(.epoch, current)
                    }
                    throw error
                default:
                    throw error
                }
            }
            let next = try ahead?.value() ?? []
            try recordCompleted(&taken, into: &result)
            taken = batch
            batch = next
        }
        try completeTaken(taken, into: &result)
        taken = []
    }

    /// Completes `taken` (uploaded, still queued) here and now, as the loop's last step.
    private func completeTaken(_ taken: [CrudTransaction], into result: inout Result) throws {
        guard !taken.isEmpty else { return }
        try database.uploadQueue.complete(taken, epoch: epoch)
        var completed = taken
        try recordCompleted(&completed, into: &result)
    }

    /// Counts `completed` (uploaded and removed from the queue), tells the events, and empties it.
    private func recordCompleted(_ completed: inout [CrudTransaction], into result: inout Result) throws {
        guard let lastEntry = completed.last?.lastEntryID else { return }
        carried.pendingRows.removeThrough(lastEntry)
        let entries = completed.reduce(0) { $0 + $1.entries.count }
        result.transactions += completed.count
        result.entries += entries
        onEvent(.uploaded(transactions: completed.count, entries: entries))
        completed = []
    }

    /// Uploads `transactions` one at a time, setting aside (with the backend's reason) each one the
    /// backend refuses for good; any other failure ends the pass as usual.
    private func uploadOneByOne(_ transactions: [CrudTransaction], into result: inout Result) throws {
        for transaction in transactions {
            do {
                try backend.upload([transaction], clientID: clientID, epoch: epoch)
            } catch let error as TandemError {
                guard case .uploadRejected = error else { throw error }
                try setAside(transaction, error, into: &result)
                continue
            }
            var completed = [transaction]
            try database.uploadQueue.complete(completed, epoch: epoch)
            try recordCompleted(&completed, into: &result)
        }
    }

    /// Completes the transactions of `batch` the backend applied and sets aside those it refused,
    /// in order, up to the first with neither answer (``PartialUpload``).
    private func settle(_ batch: [CrudTransaction], by answers: PartialUpload, into result: inout Result) throws {
        var applied: [CrudTransaction] = []
        for transaction in batch {
            if answers.applied.contains(transaction.transactionID) {
                applied.append(transaction)
            } else if let reason = answers.refused[transaction.transactionID] {
                if !applied.isEmpty { try database.uploadQueue.complete(applied, epoch: epoch) }
                try recordCompleted(&applied, into: &result)
                try setAside(transaction, transaction.refused(reason), into: &result)
            } else {
                break
            }
        }
        if !applied.isEmpty { try database.uploadQueue.complete(applied, epoch: epoch) }
        try recordCompleted(&applied, into: &result)
    }

    /// Sets `transaction` aside with the backend's refusal, fenced, and tells the events.
    private func setAside(_ transaction: CrudTransaction, _ error: TandemError, into result: inout Result) throws {
        try database.setAside(transaction, error: "\(error)", epoch: epoch)
        carried.pendingRows.remove(transaction.entries.map(\.id))
        result.setAside += 1
        var failure = SyncFailure(error, databasePath: database.path)
        failure.message = "set aside transaction \(transaction.transactionID) (resolve it with \(Remedy.resolveRejectedUpload.apiTerms)): \(failure.message)"
        failure.remedy = .resolveRejectedUpload
        onEvent(.error(failure))
    }

    /// Moves the queued transaction ids from `conflicting` on past `highest` (order and grouping
    /// kept), so that a restored or copied database stops reusing ids the backend has applied.
    func renumberQueue(from conflicting: Int64, after highest: Int64) throws {
        try database.write { tx in
            try Fence.check(tx, epoch: epoch)
            // Earlier transactions in the queue were retries the backend skipped; keep their ids.
            guard conflicting <= highest else { return }
            let shift = highest + 1 - conflicting
            try UploadQueue.renumber(from: conflicting, by: shift, in: tx)
        }
    }

    /// Fetches everything newer than the cursor and applies it in one write transaction, so no
    /// reader ever sees an early part of a backlog (one row's older value over this client's own
    /// newer write, which a later part of the backlog carries), however large the backlog is:
    /// past ``maximumApply`` changes the fetched ones wait in `ps_download` (invisible to
    /// queries) until the rest has arrived.
    ///
    /// Another process may remove the stored cursor meanwhile, to ask for a full sync
    /// (``UploadQueue/discardRejected(transactionID:)``): what was fetched after the old one is
    /// then not applied, and the download starts again from where the cursor now stands.
    func download(into result: inout Result) throws {
        if try !download(once: &result) { _ = try download(once: &result) }
    }

    /// One download from the stored cursor; false when the stored cursor changed before its
    /// changes were applied (nothing is applied then).
    private func download(once result: inout Result) throws -> Bool {
        // What was uploaded before this download's first fetch is in the server's state it
        // fetches: once applied, those uploads are synced (``Counter/synced``).
        let (cursor, uploaded, synced) = try database.read { tx in
            (try tx.stored(.cursor).stringValue ?? "", try tx.connection.counter(.uploaded) ?? 0, try tx.connection.counter(.synced) ?? 0)
        }
        var changes: [ServerChange] = []
        var staged = 0
        var next = cursor
        var more = true
        var fullSync: String?
        defer { if staged > 0 { try? database.write { try DownloadStage.clear(in: $0) } } }
        while more {
            let batch = try backend.fetchChanges(after: next, limit: downloadBatch)
            if batch.changes.isEmpty && batch.nextCursor.utf8.elementsEqual(next.utf8) && batch.fullSyncReason == nil { break }
            if let reason = batch.fullSyncReason {
                // A full sync holds every row: what was fetched before it is superseded.
                fullSync = reason
                changes = []
                if staged > 0 { try database.write { try DownloadStage.clear(in: $0) } }
                staged = 0
                onEvent(.fullSync(reason: reason))
            }
            changes += batch.changes
            next = batch.nextCursor
            more = batch.hasMore
            if more && changes.count >= maximumApply {
                try stage(changes, after: staged)
                staged += changes.count
                changes = []
            }
        }
        // Compared byte for byte: `String` equality is Unicode's canonical equivalence, under
        // which a cursor after the row id `é` (one code point) equals one after `e` and an accent.
        if next.utf8.elementsEqual(cursor.utf8) && fullSync == nil {
            // Nothing newer on the server: this file holds its state, the uploads included.
            if uploaded > synced {
                try database.write { tx in
                    try Fence.check(tx, epoch: epoch)
                    try tx.connection.raiseCounter(.synced, to: uploaded)
                }
            }
            return true
        }
        let applied = try database.write { tx -> Bool in
            try Fence.check(tx, epoch: epoch)
            guard (try tx.stored(.cursor).stringValue ?? "").utf8.elementsEqual(cursor.utf8) else { return false }
            let applier = ChangeApplier(schema: try SchemaInstaller.cachedStoredSchema(tx) ?? database.schema, pending: try carried.pendingRows.rows(in: tx))
            if fullSync != nil { try applier.beginFullSync(in: tx) }
            if staged > 0 {
                var chunk: [ServerChange] = []
                try DownloadStage.forEach(in: tx) { change in
                    chunk.append(change)
                    if chunk.count == 1_000 { try applier.apply(chunk, in: tx); chunk = [] }
                }
                try applier.apply(chunk, in: tx)
                try DownloadStage.clear(in: tx)
            }
            try applier.apply(changes, in: tx)
            try applier.endFullSync(in: tx)
            try tx.store(.cursor, next)
            try tx.removeStored(.downloading)
            try tx.connection.raiseCounter(.synced, to: uploaded)
            return true
        }
        guard applied else { return false }  // the defer clears what was staged
        let count = changes.count + staged
        staged = 0  // applied: nothing left to clear
        result.downloaded += count
        result.fullSyncReason = fullSync ?? result.fullSyncReason
        if count > 0 { onEvent(.downloaded(changes: count)) }
        // The backend may compact its log behind every client's cursor; a failure here costs
        // nothing now (the next pass tells it again).
        try? backend.acknowledge(cursor: next, clientID: clientID)
        return true
    }

    /// Keeps fetched changes in `ps_download`, numbered after the ones staged before, and marks
    /// the download as in progress, in one transaction.
    private func stage(_ changes: [ServerChange], after count: Int) throws {
        try database.write { tx in
            try Fence.check(tx, epoch: epoch)
            try DownloadStage.append(changes, after: count, in: tx)
            try tx.store(.downloading, 1)
        }
    }
}
