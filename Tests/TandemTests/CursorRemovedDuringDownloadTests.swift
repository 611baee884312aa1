import Foundation
import Synchronization
import Testing
@testable import Tandem

/// Another process may remove the stored cursor while the owner downloads, to ask for a full
/// sync (discarding a rejected upload does): the download then applies nothing it fetched after
/// the old cursor, and downloads again from where the cursor now stands.
struct CursorRemovedDuringDownloadTests {
    /// The embedded backend; before its first fetch answers, `beforeFirstFetch` runs. Notes
    /// every cursor fetched after.
    final class InterruptedBackend: SyncBackend, @unchecked Sendable {
        let inner: EmbeddedBackend
        let beforeFirstFetch: () throws -> Void
        let cursors = Mutex<[String]>([])
        var identifier: String { inner.identifier }

        init(_ inner: EmbeddedBackend, beforeFirstFetch: @escaping () throws -> Void) {
            self.inner = inner
            self.beforeFirstFetch = beforeFirstFetch
        }

        func upload(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws {
            try inner.upload(transactions, clientID: clientID, epoch: epoch)
        }

        func fetchChanges(after cursor: String, limit: Int) throws -> ChangeBatch {
            if cursors.withLock({ $0.isEmpty }) { try beforeFirstFetch() }
            cursors.withLock { $0.append(cursor) }
            return try inner.fetchChanges(after: cursor, limit: limit)
        }

        func waitForChanges(after cursor: String, timeout: Duration) throws -> String? {
            try inner.waitForChanges(after: cursor, timeout: timeout)
        }

        func interruptWaits() { inner.interruptWaits() }
    }

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
        let backend = InterruptedBackend(try EmbeddedBackend(path: dir.path("server.db"))) {
            try a.write { try $0.removeStored(.cursor) }  // as discarding a rejected upload does
        }
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
