import Foundation
import Synchronization
import Testing
@testable import Tandem

/// A backend that records each upload call and checks, as it is called, that nothing of the
/// batch it takes has left the queue yet; it refuses for good every transaction touching a row
/// whose id starts with "bad".
private final class WatchingBackend: SyncBackend, @unchecked Sendable {
    // Invariant: `calls` and `violations` are only touched under their mutexes; `database` is set
    // once before the first upload.
    let inner = MemoryBackend()
    var database: SharedDatabase!
    let calls = Mutex<[[Int64]]>([])
    let violations = Mutex<[String]>([])
    var identifier: String { inner.identifier }

    func upload(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws {
        let ids = transactions.map(\.transactionID)
        calls.withLock { $0.append(ids) }
        let queued = Set(try database.uploadQueue.transactions(limit: 100_000).map(\.transactionID))
        for id in ids where !queued.contains(id) { violations.withLock { $0.append("transaction \(id) left the queue before the backend took it") } }
        if let entry = transactions.flatMap(\.entries).first(where: { $0.rowID.hasPrefix("bad") }) {
            throw TandemError.uploadRejected(table: entry.table, rowID: entry.rowID, reason: "a constraint refuses it")
        }
        try inner.upload(transactions, clientID: clientID, epoch: epoch)
    }
    func fetchChanges(after cursor: String, limit: Int) throws -> ChangeBatch { try inner.fetchChanges(after: cursor, limit: limit) }
    func waitForChanges(after cursor: String, timeout: Duration) throws -> String? { try inner.waitForChanges(after: cursor, timeout: timeout) }
    func interruptWaits() { inner.interruptWaits() }
}

/// The owner completes one batch and reads the next while the backend takes the one between:
/// every transaction still reaches the backend once, in order, and stays queued until then,
/// also where a batch after the first is refused in part.
@Suite struct UploadOverlapTests {
    @Test func batchesOverlapTheQueuesOwnWorkAndEachTransactionIsTakenOnce() throws {
        let dir = try TemporaryDirectory()
        let backend = WatchingBackend()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        backend.database = db
        let ids = (0..<40).map { $0 == 17 || $0 == 31 ? "bad\($0)" : "ok\($0)" }
        for id in ids { try db.execute("INSERT INTO notes(id, title) VALUES (?, 'x')", [id]) }
        var pass = SyncPass(database: db, backend: backend, epoch: 0, clientID: try db.clientID())
        pass.uploadBatch = 3
        let uploadedEvents = Mutex(0)
        pass.onEvent = { event in
            if case .uploaded(_, let entries) = event { uploadedEvents.withLock { $0 += entries } }
        }
        let result = try pass.run()
        #expect(backend.violations.withLock { $0 } == [])
        #expect(result.transactions == 38)
        #expect(result.setAside == 2)
        #expect(uploadedEvents.withLock { $0 } == 38, "each completed transaction told once")
        #expect(try db.uploadQueue.pendingCount() == 0)
        #expect(try db.uploadQueue.rejected().map(\.transaction.entries.first?.rowID) == ["bad17", "bad31"])
        // Taken by the backend: every good transaction once, in queue order.
        var taken: [Int64] = []
        let setAside = Set(try db.uploadQueue.rejected().map(\.transaction.transactionID))
        for call in backend.calls.withLock({ $0 }) where !call.contains(where: setAside.contains) {
            taken += call
        }
        #expect(taken == taken.sorted() && Set(taken).count == taken.count && taken.count == 38)
        let fresh = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        _ = try fresh.sync.once(with: backend.inner)
        #expect(try fresh.fetchAll("SELECT id FROM notes ORDER BY id").map { $0[0].stringValue ?? "" } == ids.filter { $0.hasPrefix("ok") }.sorted())
    }
}
