import Foundation
import Synchronization
import Testing
@testable import Tandem

@Suite struct SyncPrecisionTests {
    @Test func realsArriveOnAnotherClientExactly() throws {
        let dir = try TemporaryDirectory()
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        try a.execute("INSERT INTO notes(id, score) VALUES ('r', ?)", [0.1 + 0.2])
        try a.execute("UPDATE notes SET score = ? WHERE id = 'r'", [1.0 / 3.0])
        _ = try a.sync.once(with: backend)
        _ = try b.sync.once(with: backend)
        #expect(try b.fetchAll("SELECT score FROM notes").first?[0] == .real(1.0 / 3.0))
    }
}
