import Foundation
import Synchronization
import Testing
@testable import Tandem

/// The owner completes one batch and reads the next while the backend takes the one between:
/// every transaction still reaches the backend once, in order, and stays queued until then,
/// also where a batch after the first is refused in part.
@Suite struct UploadOverlapTests {
    @Test func batchesOverlapTheQueuesOwnWorkAndEachTransactionIsTakenOnce() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        // Each upload call recorded, and checked as it comes: nothing of its batch has left the queue yet.
        let calls = Mutex<[[Int64]]>([]), violations = Mutex<[String]>([])
        let backend = RefusingBackend()
        backend.beforeUpload = { transactions in
            let ids = transactions.map(\.transactionID)
            calls.withLock { $0.append(ids) }
            let queued = Set(try db.uploadQueue.transactions(limit: 100_000).map(\.transactionID))
            for id in ids where !queued.contains(id) { violations.withLock { $0.append("transaction \(id) left the queue before the backend took it") } }
        }
        let ids = (0..<40).map { $0 == 17 || $0 == 31 ? "bad\($0)" : "ok\($0)" }
        for id in ids { try db.execute("INSERT INTO notes(id, title) VALUES (?, 'x')", [id]) }
        var pass = SyncPass(database: db, backend: backend, epoch: 0, clientID: try db.clientID())
        pass.uploadBatch = 3
        let uploadedEvents = Mutex(0)
        pass.onEvent = { event in
            if case .uploaded(_, let entries) = event { uploadedEvents.withLock { $0 += entries } }
        }
        let result = try pass.run()
        #expect(violations.withLock { $0 } == [])
        #expect(result.transactions == 38)
        #expect(result.setAside == 2)
        #expect(uploadedEvents.withLock { $0 } == 38, "each completed transaction told once")
        #expect(try db.uploadQueue.pendingCount() == 0)
        #expect(try db.uploadQueue.rejected().map(\.transaction.entries.first?.rowID) == ["bad17", "bad31"])
        // Taken by the backend: every good transaction once, in queue order.
        var taken: [Int64] = []
        let setAside = Set(try db.uploadQueue.rejected().map(\.transaction.transactionID))
        for call in calls.withLock({ $0 }) where !call.contains(where: setAside.contains) {
            taken += call
        }
        #expect(taken == taken.sorted() && Set(taken).count == taken.count && taken.count == 38)
        let fresh = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        _ = try fresh.sync.once(with: backend.inner)
        #expect(try fresh.fetchAll("SELECT id FROM notes ORDER BY id").map { $0[0].stringValue ?? "" } == ids.filter { $0.hasPrefix("ok") }.sorted())
    }

    /// A backlog of large transactions goes up in batches of about `uploadBatchEntries`
    /// entries, whole transactions each: the one that reaches the limit, however large, ends
    /// the batch. So other clients download a batch while the next one uploads.
    @Test func batchesEndAtTheirEntryLimitWithWholeTransactions() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let sizes = [100, 100, 100, 100, 100, 700, 1, 1, 100]
        for (t, size) in sizes.enumerated() {
            try db.write { tx in
                for r in 0..<size { try tx.execute("INSERT INTO notes(id, title) VALUES (?, 'x')", ["t\(t)-r\(r)"]) }
            }
        }
        let backend = RefusingBackend()
        let calls = Mutex<[[Int]]>([])
        backend.beforeUpload = { transactions in calls.withLock { $0.append(transactions.map(\.entries.count)) } }
        var pass = SyncPass(database: db, backend: backend, epoch: 0, clientID: try db.clientID())
        pass.uploadBatchEntries = 250
        let result = try pass.run()
        #expect(result.transactions == sizes.count && result.entries == sizes.reduce(0, +))
        #expect(calls.withLock { $0 } == [[100, 100, 100], [100, 100, 700], [1, 1, 100]])
        #expect(try db.uploadQueue.transactions(limit: 100, entryLimit: 250).map(\.entries.count) == [])
        // The public reading of the queue is by transactions only.
        try db.execute("INSERT INTO notes(id, title) VALUES ('late', 'x')")
        #expect(try db.uploadQueue.transactions(limit: 100).map(\.entries.count) == [1])
    }
}
