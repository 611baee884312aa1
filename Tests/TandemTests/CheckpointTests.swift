import Foundation
import Synchronization
import Testing
@testable import Tandem

@Suite struct CheckpointTests {
    @Test func truncateCheckpointEmptiesTheWAL() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        for i in 0..<50 { try db.execute("INSERT INTO notes(title) VALUES (?)", ["row \(i)"]) }
        #expect(db.walSize() > 0)
        let result = try db.checkpoint(.truncate)
        #expect(!result.busy)
        #expect(db.walSize() == 0)
        #expect(try count(db, "SELECT count(*) FROM notes") == 50)
    }

    /// Tandem replaces SQLite's automatic checkpoint (run inside COMMIT, under Tandem's write
    /// lock) with one run after the lock is released; the WAL must still stay bounded.
    @Test func commitsKeepTheWALBoundedWithoutAnOwner() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let title = String(repeating: "x", count: 3000)
        for _ in 0..<3000 { try db.execute("INSERT INTO notes(title) VALUES (?)", [title]) }
        // Without any checkpoint the WAL holds every frame written: over 3000 × 3 pages of 4 KiB.
        let unbounded: Int64 = 3000 * 3 * 4096
        #expect(db.walSize() > 0)
        #expect(db.walSize() < unbounded / 3, "WAL is \(db.walSize()) bytes after 3000 commits: automatic checkpoints did not run")
        #expect(try count(db, "SELECT count(*) FROM notes") == 3000)
    }
}
