import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// Files and layout: nothing a refused command or a second name can lose.
@Suite struct FileSafetyTests {
    /// A database with two hard links would get a WAL per name; it is refused under both names,
    /// naming the file and why, and nothing is written.
    @Test func hardLinkedDatabasesAreRefused() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('n', 'before')")
        #expect(link(db.path, dir.path("b.db")) == 0)
        for name in ["a.db", "b.db"] {
            let result = try runTandem(["exec", dir.path(name), "INSERT INTO notes(title) VALUES ('lost?')"])
            #expect(result.status == 1)
            #expect(result.stderr.contains(dir.path(name)) && result.stderr.contains("2 hard links"), "\(result.stderr)")
        }
        #expect(try count(db, "SELECT count(*) FROM notes") == 1)
        #expect(throws: TandemError.self) { try SharedDatabase(path: dir.path("b.db")) }
    }

    /// Only the owner's epoch removes upload entries: a process holding an older epoch cannot
    /// drop queued writes while the owner uploads them.
    @Test func onlyTheOwnersEpochCompletesUploads() throws {
        let f = try SyncFixture()
        try f.a.execute("INSERT INTO notes(id, title) VALUES ('1', 'synced')")
        #expect(try syncOnce(f.a, f.backendURL))  // an owner ran: epoch 1
        try f.a.execute("INSERT INTO notes(id, title) VALUES ('2', 'queued')")
        let queued = try f.a.uploadQueue.transactions(limit: 10)
        #expect(throws: TandemError.staleEpoch(held: 0, current: 1)) { try f.a.uploadQueue.complete(queued, epoch: 0) }
        #expect(try f.a.uploadQueue.pendingCount() == 1)
    }
}
