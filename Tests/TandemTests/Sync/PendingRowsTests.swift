import Foundation
import Testing
@testable import Tandem

/// The owner's record of rows with queued entries, kept from pass to pass, always equals the
/// queue read whole, whatever happens between passes: writes, completed uploads, transactions
/// set aside, retried and discarded, and a queue emptied behind the owner's back.
@Suite struct PendingRowsTests {
    @Test func theKeptRowsAlwaysEqualTheQueueReadWhole() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let pending = PendingRows()
        var generator = SystemRandomNumberGenerator()
        func truth() throws -> [RowKey: Int] {
            try db.read { tx in
                var counts: [RowKey: Int] = [:]
                for row in try tx.fetchAll("SELECT data ->> '$.type', data ->> '$.id' FROM ps_crud") {
                    counts[RowKey(table: row[0].stringValue ?? "", id: row[1].stringValue ?? ""), default: 0] += 1
                }
                return counts
            }
        }
        for step in 0..<300 {
            let id = "r\(Int.random(in: 0..<12, using: &generator))"
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<4:
                try db.execute("INSERT OR REPLACE INTO notes(id, title) VALUES (?, ?)", [id, "t\(step)"])
            case 4:
                try db.execute("DELETE FROM notes WHERE id = ?", [id])
            case 5, 6:
                let head = try db.uploadQueue.transactions(limit: Int.random(in: 1...3, using: &generator))
                try db.uploadQueue.complete(head, epoch: 0)
                if let last = head.last { pending.removeThrough(last.lastEntryID) }
            case 7:
                if let transaction = try db.uploadQueue.transactions(limit: 5).randomElement(using: &generator) {
                    try db.setAside(transaction, error: "refused", epoch: 0)
                    pending.remove(transaction.entries.map(\.id))
                }
            case 8:
                try db.uploadQueue.retryRejected()
            default:
                if step % 50 == 9 {
                    _ = try db.sync.disconnectAndClear(discardPending: true)
                }  // behind the owner's back
                else {
                    try db.uploadQueue.discardRejected()
                }
            }
            let kept = try db.write { try pending.rows(in: $0) }
            #expect(kept == (try truth()), "after step \(step)")
        }
    }
}
