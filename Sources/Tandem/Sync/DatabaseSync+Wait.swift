import Foundation

/// Which writes ``DatabaseSync/waitUntilSynced(_:timeout:)`` waits for.
public enum SyncTarget: Sendable, Equatable {
    /// Every write committed so far, by any process on the host: the upload queue's newest entry
    /// when the wait begins.
    case everythingCommitted
    /// The writes queued up to and including upload queue entry `entryID` (read
    /// ``UploadQueue/newestEntryID()`` after a write: its entries are at or before it).
    case through(entryID: Int64)
}

extension DatabaseSync {
    /// Waits until the writes of `target` are on the server and this file holds the server's
    /// state that includes them (a write checkpoint): every entry through the target uploaded,
    /// then a download applied that began after those uploads. Works from any process on the
    /// host, whether or not it owns sync: it reads how far the owner got (``SyncStatus/uploadedThrough``,
    /// ``SyncStatus/syncedThrough``) after each commit of any process.
    ///
    /// - Parameters:
    ///   - target: the writes to wait for; every write committed so far by default.
    ///   - timeout: the longest wait.
    /// - Throws: ``TandemError/uploadRejected(table:rowID:reason:)`` when the backend refused a
    ///   transaction of the target for good (it was set aside, ``UploadQueue/rejected()``);
    ///   ``TandemError/notSynced(path:entry:uploadedThrough:syncedThrough:)`` when `timeout`
    ///   passes first (no process syncing, or a backend out of reach); `CancellationError`
    ///   when the task is cancelled.
    public func waitUntilSynced(_ target: SyncTarget = .everythingCommitted, timeout: Duration) async throws {
        // Nothing here runs on a dispatch queue or the cooperative pool's blocking work: the
        // looks run on the observer's thread (each commit's) and the caller's, the timeout on
        // a thread of its own, so a host whose queues are busy cannot delay the answer.
        let database = self.database
        let entry = try Self.target(target, in: database)
        let wait = SyncWait()
        let check = { @Sendable in
            guard !wait.isFinished else { return }
            do {
                if try Self.isSynced(entry, in: database) { wait.finish(.success(true)) }
            } catch {
                wait.finish(.failure(error))
            }
        }
        let synced = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, Error>) in
                wait.begin(continuation)
                do {
                    // Subscribed before the first look, so that no commit falls between the two.
                    let handler = try database.addImmediateChangeHandler { _ in check() }
                    wait.onFinish { handler.cancel() }
                    wait.finish(.success(false), after: timeout)
                    check()
                } catch {
                    wait.finish(.failure(error))
                }
            }
        } onCancel: {
            wait.finish(.failure(CancellationError()))
        }
        if synced { return }
        if try Self.isSynced(entry, in: database) { return }
        let positions = try Self.positions(in: database)
        throw TandemError.notSynced(path: database.path, entry: entry, uploadedThrough: positions.uploaded, syncedThrough: positions.synced)
    }

    private static func positions(in database: SharedDatabase) throws -> SyncPositions {
        try database.read { try SyncPositions.read(in: $0) }
    }

    /// The entry id `target` stands for now.
    private static func target(_ target: SyncTarget, in database: SharedDatabase) throws -> Int64 {
        switch target {
        case .everythingCommitted: try database.read { try SyncPositions.read(in: $0).committed }
        case .through(let id): id
        }
    }

    /// True once every entry through `entry` is uploaded and in a download applied since.
    /// - Throws: the refusal of a transaction through `entry` that was set aside.
    private static func isSynced(_ entry: Int64, in database: SharedDatabase) throws -> Bool {
        try database.read { tx in
            if let refused = try SyncPositions.refusal(through: entry, in: tx), let first = refused.transaction.entries.first {
                // The stored error is the refusal's whole message: its reason follows the prefix.
                let prefix = TandemError.uploadRejected(table: first.table, rowID: first.rowID, reason: "").description
                let reason = refused.error.hasPrefix(prefix) ? String(refused.error.dropFirst(prefix.count)) : refused.error
                throw TandemError.uploadRejected(table: first.table, rowID: first.rowID, reason: reason)
            }
            let synced = try SyncPositions.read(in: tx).synced >= entry
            let queued = try SyncPositions.queued(through: entry, in: tx)
            return synced && !queued
        }
    }
}

extension UploadQueue {
    /// The id of the newest entry ever queued, by any process (0 before any write): after a
    /// write, its entries are at or before it (``SyncTarget/through(entryID:)``).
    /// - Throws: what a read throws.
    public func newestEntryID() throws -> Int64 {
        try database.read { try SyncPositions.read(in: $0).committed }
    }
}

/// One wait's outcome, resumed once: by a look that finds the writes synced or refused, by its
/// timeout (a thread that sleeps on a condition until then, or until the outcome is known), or
/// by the task's cancellation.
private final class SyncWait: @unchecked Sendable {
    // Invariant: `continuation`, `done` and `cleanup` are guarded by `condition`.
    private let condition = NSCondition()
    private var continuation: CheckedContinuation<Bool, Error>?
    private var done = false
    private var cleanup: [@Sendable () -> Void] = []

    var isFinished: Bool {
        condition.lock()
        defer { condition.unlock() }
        return done
    }

    func begin(_ continuation: CheckedContinuation<Bool, Error>) {
        condition.lock()
        defer { condition.unlock() }
        if done { continuation.resume(returning: false) } else { self.continuation = continuation }
    }

    /// Runs `body` once the outcome is known (at once when it is).
    func onFinish(_ body: @escaping @Sendable () -> Void) {
        condition.lock()
        if !done {
            cleanup.append(body)
            condition.unlock()
            return
        }
        condition.unlock()
        body()
    }

    func finish(_ result: Result<Bool, Error>) {
        condition.lock()
        guard !done else { return condition.unlock() }
        done = true
        let continuation = self.continuation, cleanup = self.cleanup
        self.continuation = nil
        self.cleanup = []
        condition.broadcast()
        condition.unlock()
        continuation?.resume(with: result)
        for body in cleanup { body() }
    }

    /// Finishes with `result` once `delay` has passed, unless the outcome is known before.
    func finish(_ result: Result<Bool, Error>, after delay: Duration) {
        let deadline = Date(timeIntervalSinceNow: delay.seconds)
        let thread = Thread { [self] in
            condition.lock()
            while !done && condition.wait(until: deadline) {}
            condition.unlock()
            finish(result)
        }
        thread.name = "tandem.sync-wait"
        thread.start()
    }
}
