import Foundation
import Testing
@testable import Tandem

@Suite struct UploadQueueStrayTests {
    /// A client that does not close transaction ids (the sqlite3 shell) would append under the id
    /// being uploaded; reading the queue seals that id first, so later entries get a fresh one.
    @Test func entriesAppendedUnderAnUploadedIdGetAFreshOne() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let shell = { (sql: String) throws in
            let run = try Spawned(executable: "/usr/bin/sqlite3", [db.path, sql])
            #expect(try run.wait() == 0, "\(run.stderr)")
        }
        try shell("INSERT INTO notes(id, title) VALUES ('a', 'first')")
        let batch = try db.uploadQueue.transactions(limit: 10)
        try shell("INSERT INTO notes(id, title) VALUES ('b', 'second')")
        #expect(try db.uploadQueue.transactions(limit: 10).map(\.entries.count) == [1, 1], "an entry joined a transaction being uploaded")
        try db.uploadQueue.complete(batch, epoch: 0)
        let rest = try db.uploadQueue.transactions(limit: 10)
        #expect(rest.count == 1)
        #expect(rest[0].entries.map(\.rowID) == ["b"])
        #expect(rest[0].transactionID > batch[0].transactionID)
        try db.execute("INSERT INTO notes(id, title) VALUES ('c', 'tandem')")
        let all = try db.uploadQueue.transactions(limit: 10)
        #expect(all.map(\.transactionID) == all.map(\.transactionID).sorted())
        #expect(all.flatMap(\.entries).map(\.rowID) == ["b", "c"])
    }
}
