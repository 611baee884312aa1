import Foundation
import Synchronization
import Testing
@testable import Tandem
@testable import TandemPostgres

/// A download never reverts a row whose local edit is still queued: the local edit stays (and
/// goes up at the next pass, where the conflict rule decides), and a live query never shows the
/// server's older value meanwhile. On both backends, through a batch download, a full sync and
/// (PostgreSQL) a TRUNCATE; the local edit is written just before the download's first fetch,
/// after the pass's upload, so it is queued while the download applies.
@Suite struct PendingWriteRevertTests {
    /// A backend that runs `beforeFirstFetch` before its first fetch answers.
    final class FetchHook: SyncBackend, @unchecked Sendable {
        let inner: any SyncBackend
        private let fetched = Atomic<Int>(0)
        private let beforeFirstFetch: () throws -> Void
        var identifier: String { inner.identifier }
        init(_ inner: any SyncBackend, beforeFirstFetch: @escaping () throws -> Void) {
            self.inner = inner
            self.beforeFirstFetch = beforeFirstFetch
        }
        func upload(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws {
            try inner.upload(transactions, clientID: clientID, epoch: epoch)
        }
        func fetchChanges(after cursor: String, limit: Int) throws -> ChangeBatch {
            if fetched.add(1, ordering: .relaxed).newValue == 1 { try beforeFirstFetch() }
            return try inner.fetchChanges(after: cursor, limit: limit)
        }
        func waitForChanges(after cursor: String, timeout: Duration) throws -> String? { try inner.waitForChanges(after: cursor, timeout: timeout) }
        func interruptWaits() { inner.interruptWaits() }
        func acknowledge(cursor: String, clientID: String) throws { try inner.acknowledge(cursor: cursor, clientID: clientID) }
    }

    enum Path: String, CaseIterable { case batch, fullSync, truncate }

    static let cases: [(String, Path)] =
        [("embedded", .batch), ("embedded", .fullSync)] + (TestPostgres.url == nil ? [] : [("postgres", .batch), ("postgres", .fullSync), ("postgres", .truncate)])

    @Test(arguments: cases) func aDownloadNeverRevertsAQueuedEdit(backend kind: String, path: Path) throws {
        let dir = try TemporaryDirectory()
        let url = kind == "postgres" ? try TestPostgres.database(schema: notesSchema) : nil
        func backend() throws -> any SyncBackend {
            if let url { return try PostgresBackend(conninfo: url) }
            return try EmbeddedBackend(path: dir.path("server.db"))
        }
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema), b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        try a.execute("INSERT INTO notes(id, title) VALUES ('r', 'base'), ('gone', 'base')")
        _ = try a.sync.once(with: backend())
        _ = try b.sync.once(with: backend())
        // The server moves on: B edits r and deletes 'gone' (or the table is truncated).
        if path == .truncate {
            try PostgresConnection(url!).execute("TRUNCATE notes")
        } else {
            try b.execute("UPDATE notes SET title = 'theirs' WHERE id = 'r'")
            try b.execute("DELETE FROM notes WHERE id = 'gone'")
            _ = try b.sync.once(with: backend())
        }
        if path == .fullSync { try a.write { try $0.removeStored(.cursor) } }
        let shown = Mutex<[String]>([])
        let live = try a.observe("SELECT group_concat(id || '=' || title, ',') FROM (SELECT * FROM notes ORDER BY id)") { result in
            if case .success(let rows) = result { shown.withLock { $0.append(rows[0][0].stringValue ?? "") } }
        }
        defer { withExtendedLifetime(live) {} }
        try waitUntil("the live query's first result") { shown.withLock { !$0.isEmpty } }
        // A's edits, queued while the download applies.
        let hooked = FetchHook(try backend()) {
            try a.execute("UPDATE notes SET title = 'mine' WHERE id = 'r'")
            try a.execute("UPDATE notes SET title = 'mine too' WHERE id = 'gone'")
        }
        _ = try a.sync.once(with: hooked)
        let rows = try a.fetchAll("SELECT id, title FROM notes ORDER BY id").map { "\($0[0].stringValue ?? "")=\($0[1].stringValue ?? "")" }
        #expect(rows == ["gone=mine too", "r=mine"], "\(kind) \(path): the queued edits stay: \(rows)")
        #expect(try a.uploadQueue.pendingCount() > 0, "still queued after the download")
        try waitUntil("the live query to show the edits") { shown.withLock { $0.last } == "gone=mine too,r=mine" }
        let values = shown.withLock { $0 }
        let reverted = values.filter { $0.contains("r=theirs") || !$0.contains("r=") || !$0.contains("gone=") }
        #expect(reverted.isEmpty, "\(kind) \(path): the live query showed a reverted row: \(values)")
        // The next pass uploads them and B follows: the latest write wins on the server; a PATCH
        // of a row the server no longer has (truncated) loses to the delete.
        _ = try a.sync.once(with: backend())
        _ = try b.sync.once(with: backend())
        _ = try a.sync.once(with: backend())
        let expected = path == .truncate ? [String]() : ["r=mine"]
        for db in [a, b] {
            let r = try db.fetchAll("SELECT id, title FROM notes WHERE id = 'r'").map { "\($0[0].stringValue ?? "")=\($0[1].stringValue ?? "")" }
            #expect(r == expected, "\(db.path): \(r)")
        }
    }

    /// A scope move takes a row out of a tenant's slice while its host has an edit of it queued:
    /// the download keeps the row as edited (the edit is then refused and set aside, and the
    /// full sync after that takes the row away).
    @Test(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL")) func aScopeMoveKeepsAQueuedEdit() throws {
        let fleet = try ScopedSyncTests.Fleet()
        let admin = try PostgresConnection(fleet.admin)
        try admin.execute("INSERT INTO folders(id, name, tenant) VALUES ('fa', 'A folder', 'A')")
        try admin.execute("INSERT INTO notes(id, title, folder_id) VALUES ('r', 'base', 'fa')")
        let a1 = try fleet.client("a1")
        _ = try a1.sync.once(with: PostgresBackend(conninfo: fleet.url("a1")))
        try admin.execute("UPDATE folders SET tenant = 'B' WHERE id = 'fa'")
        let hooked = FetchHook(try PostgresBackend(conninfo: fleet.url("a1"))) { try a1.execute("UPDATE notes SET title = 'mine' WHERE id = 'r'") }
        _ = try a1.sync.once(with: hooked)
        #expect(try a1.fetchAll("SELECT title FROM notes WHERE id = 'r'").first?[0].stringValue == "mine", "the queued edit stays")
        #expect(try a1.fetchAll("SELECT id FROM folders").isEmpty, "the folder, with nothing queued, left the slice")
        _ = try? a1.sync.once(with: PostgresBackend(conninfo: fleet.url("a1")))
        _ = try? a1.sync.once(with: PostgresBackend(conninfo: fleet.url("a1")))
        #expect(try a1.uploadQueue.rejected().flatMap { $0.transaction.entries.map(\.rowID) } == ["r"], "refused, set aside")
        #expect(try a1.fetchAll("SELECT id FROM notes").isEmpty, "then the row left the slice")
    }

    /// A server restored from a dump is a new history: the full sync it brings keeps a queued
    /// edit and a queued insert the server never had.
    @Test(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL")) func aNewHistoryKeepsQueuedEdits() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let dir = try TemporaryDirectory()
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try a.execute("INSERT INTO notes(id, title) VALUES ('r', 'base')")
        _ = try a.sync.once(with: PostgresBackend(conninfo: url))
        try PostgresConnection(url).execute("UPDATE notes SET title = 'theirs' WHERE id = 'r'")
        let copy = try TestPostgres.restoredCopy(of: url)
        let hooked = FetchHook(try PostgresBackend(conninfo: copy)) {
            try a.execute("UPDATE notes SET title = 'mine' WHERE id = 'r'")
            try a.execute("INSERT INTO notes(id, title) VALUES ('new', 'queued')")
        }
        _ = try a.sync.once(with: hooked)
        #expect(try a.sync.status().lastFullSync?.reason.contains("history changed") == true, "a full sync of the new history")
        let rows = try a.fetchAll("SELECT id, title FROM notes ORDER BY id").map { "\($0[0].stringValue ?? "")=\($0[1].stringValue ?? "")" }
        #expect(rows == ["new=queued", "r=mine"], "\(rows)")
    }
}
