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
}
