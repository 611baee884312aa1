import Foundation
import Testing
@testable import Tandem

@Suite struct RealPrecisionTests {
    /// Reals keep every digit through the JSON storage, the CRUD entry and a PATCH.
    @Test func realsRoundTripExactly() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let value = 0.1 + 0.2  // 0.30000000000000004
        try db.execute("INSERT INTO notes(id, score) VALUES ('r', ?)", [value])
        #expect(try db.fetchAll("SELECT score FROM notes").first?[0] == .real(value))
        try db.execute("UPDATE notes SET score = ? WHERE id = 'r'", [value * 3])
        #expect(try db.fetchAll("SELECT score FROM notes").first?[0] == .real(value * 3))
        let entries = try db.uploadQueue.transactions(limit: 10).flatMap(\.entries)
        #expect(entries.first?.data?["score"] == .double(value))
        #expect(entries.last?.data?["score"] == .double(value * 3))
    }
}
