import Foundation
import Testing
@testable import Tandem

/// The ids a full sync keeps, as the hexadecimal JSON array `hex(id) IN json_each(?)` reads: each
/// id's bytes exactly as SQLite's `hex` writes them, for generated ids of every kind.
@Suite struct HexIDListTests {
    @Test func everyIdReadsAsSQLitesHexWritesIt() throws {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "Z", "0", "\u{0}", "\"", "\\", "é", "😀", "\u{301}", "\u{7f}", "\n", " ", "-", "ü"]
        var ids = ["", "plain", "a\u{0}b", "\"quoted\"", "back\\slash", UUID().uuidString.lowercased()]
        for _ in 0..<500 { ids.append((0..<Int.random(in: 1...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()) }
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("hex.db"), schema: notesSchema)
        defer { db.close() }
        let list = SQLText.hexJSONArray(ids)
        let read = try db.read { tx in try tx.fetchAll("SELECT value FROM json_each(?)", [list]).map { $0[0].stringValue ?? "" } }
        let sqlite = try db.read { tx in try ids.map { try tx.scalar("SELECT hex(?)", [$0]).stringValue ?? "" } }
        #expect(read == sqlite)
        #expect(SQLText.hexJSONArray([String]()) == "[]")
    }
}
