import Foundation
import Synchronization
import Testing
@testable import Tandem

/// Another process may remove the stored cursor while the owner downloads, to ask for a full
/// sync (discarding a rejected upload does): the download then applies nothing it fetched after
/// the old cursor, and downloads again from where the cursor now stands.
struct CursorRemovedDuringDownloadTests {
    @Test func aCursorRemovedDuringADownloadIsNotOverwritten() throws {
        let dir = try TemporaryDirectory()
        let server = try EmbeddedBackend(path: dir.path("server.db"))
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        try b.execute("INSERT INTO notes(id, title) VALUES ('first', 'b')")
        _ = try b.sync.once(with: server)
        _ = try a.sync.once(with: server)
        let synced = try #require(try a.read { try $0.stored(.cursor).stringValue })
        #expect(!synced.isEmpty)
        try b.execute("INSERT INTO notes(id, title) VALUES ('second', 'b')")
        _ = try b.sync.once(with: server)
        let backend = ObservedEmbeddedBackend(
            try EmbeddedBackend(path: dir.path("server.db")),
            beforeFirstFetch: {
                try a.write { try $0.removeStored(.cursor) }  // as discarding a rejected upload does
            })
        let epoch = try a.read { try $0.stored(.epoch).int64Value } ?? 0  // the last sync's owner
        let pass = SyncPass(database: a, backend: backend, epoch: epoch, clientID: try a.clientID())
        var result = SyncPass.Result()
        try pass.download(into: &result)
        #expect(backend.cursors.withLock { $0 }.first == synced)
        #expect(backend.cursors.withLock { $0 }.dropFirst().first == "", "downloaded again from no cursor")
        #expect(try a.read { try $0.stored(.cursor).stringValue } == (try server.fetchChanges(after: "", limit: 100).nextCursor))
        #expect(try count(a, "SELECT count(*) FROM notes WHERE id IN ('first', 'second')") == 2)
    }
}
