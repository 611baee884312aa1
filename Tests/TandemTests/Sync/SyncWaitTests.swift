import Foundation
import Testing
@testable import Tandem

/// Read-your-writes from any process: a process that never syncs waits until its write is on
/// the server and in a download applied since, while another process owns sync; a refused
/// write ends the wait with the refusal, no owner with a timeout that says how far things got.
@Suite struct SyncWaitTests {
    /// `tandem exec --wait-synced` while `tandem app` (another process) owns sync: when it
    /// returns, a client that syncs now downloads the row, and the positions say synced.
    func waitsForTheOwner(backend url: String, in dir: TemporaryDirectory) throws {
        let a = dir.path("a.db"), b = dir.path("b.db")
        for path in [a, b] { try SharedDatabase(path: path, schema: notesSchema).close() }
        let app = try Spawned(["app", a, "--backend", url, "--json"])
        defer { app.signal(SIGTERM) }
        try waitUntil(timeout: 30, "the app to own sync") { try SharedDatabase(path: a).sync.status().ownerPID == app.pid }
        for round in 0..<3 {
            let write = try tandem(["exec", a, "--wait-synced", "30s", "INSERT INTO notes(id, title) VALUES (?, 'written by a helper')", "r\(round)"])
            #expect(write.status == 0, "\(write.stderr)")
            #expect(write.stdout.hasSuffix("synced"), "\(write.stdout)")
            let status = try SharedDatabase(path: a).sync.status()
            #expect(status.syncedThrough >= status.committedThrough && status.uploadedThrough >= status.committedThrough, "\(status)")
            #expect(try tandem(["sync", b, "--backend", url]).status == 0)
            let db = try SharedDatabase(path: b)
            #expect(try db.fetchAll("SELECT count(*) FROM notes WHERE id = ?", ["r\(round)"]).first?[0] == .integer(1), "round \(round): the row is on the server")
            db.close()
        }
        // `tandem sync --wait` waits for the owner instead of refusing while it owns sync.
        #expect(try tandem(["exec", a, "INSERT INTO notes(id, title) VALUES ('last', 'x')"]).status == 0)
        let wait = try tandem(["sync", a, "--wait", "30s"])
        #expect(wait.status == 0 && wait.stdout == "synced", "\(wait.stdout) \(wait.stderr)")
        #expect(try SharedDatabase(path: a).sync.status().syncedThrough == (try SharedDatabase(path: a).uploadQueue.newestEntryID()))
        app.signal(SIGTERM)
        #expect(try app.wait(timeout: 30) == 0)
    }

    @Test func aHelperWaitsUntilTheOwnerSyncedItsWriteEmbedded() throws {
        let dir = try TemporaryDirectory()
        try waitsForTheOwner(backend: "sqlite:" + dir.path("server.db"), in: dir)
    }

    @Test(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
    func aHelperWaitsUntilTheOwnerSyncedItsWritePostgres() throws {
        let dir = try TemporaryDirectory()
        try waitsForTheOwner(backend: try TestPostgres.database(schema: notesSchema), in: dir)
    }

    /// A write the backend refuses for good ends the wait with the refusal, naming the row.
    @Test func aRefusedWriteEndsTheWaitWithTheRefusal() async throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        defer { db.close() }
        let session = try db.sync.start(with: RefusingBackend())
        defer { session.cancel() }
        try await db.write { tx in try tx.execute("INSERT INTO notes(id, title) VALUES ('ok-1', 'fine')") }
        try await db.sync.waitUntilSynced(timeout: .seconds(30))
        try await db.write { tx in try tx.execute("INSERT INTO notes(id, title) VALUES ('bad-1', 'refused')") }
        // Timed on Dispatch's global queue: tests that block the cooperative pool's threads
        // (two on 2 cores) would delay the wait's resumption, not the wait.
        let waited = await withTaskExecutorPreference(GlobalQueueExecutor.shared) {
            let started = ContinuousClock.now
            await #expect(throws: TandemError.uploadRejected(table: "notes", rowID: "bad-1", reason: "a constraint refuses it")) {
                try await db.sync.waitUntilSynced(timeout: .seconds(30))
            }
            return ContinuousClock.now - started
        }
        #expect(waited < .seconds(30), "the refusal ended the wait, not the timeout")
        // Waiting through a later write still names the refusal: it is among the writes waited for.
        try await db.write { tx in try tx.execute("INSERT INTO notes(id, title) VALUES ('ok-2', 'fine')") }
        let newest = try db.uploadQueue.newestEntryID()
        await #expect(throws: TandemError.uploadRejected(table: "notes", rowID: "bad-1", reason: "a constraint refuses it")) {
            try await db.sync.waitUntilSynced(.through(entryID: newest), timeout: .seconds(30))
        }
    }

    /// Without a process syncing, the wait runs out with how far uploads and downloads got; with
    /// nothing queued since the last download, it returns at once.
    @Test func withoutAnOwnerTheWaitRunsOutSayingWhereThingsStand() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        try SharedDatabase(path: path, schema: notesSchema).close()
        let write = try tandem(["exec", path, "--wait-synced", "300ms", "INSERT INTO notes(id, title) VALUES ('x', 'y')"])
        #expect(write.status == 4, "\(write.stderr)")
        #expect(write.stderr.contains("through upload queue entry 1 are not yet uploaded"), "\(write.stderr)")
        #expect(try tandem(["sync", path, "--backend", "sqlite:" + dir.path("server.db")]).status == 0)
        let db = try SharedDatabase(path: path)
        defer { db.close() }
        // Timed on Dispatch's global queue: tests that block the cooperative pool's threads
        // (two on 2 cores) would delay the wait's resumption, not the wait.
        let waited = try await withTaskExecutorPreference(GlobalQueueExecutor.shared) {
            let started = ContinuousClock.now
            try await db.sync.waitUntilSynced(timeout: .zero)
            return ContinuousClock.now - started
        }
        #expect(waited < .seconds(5))
        let status = try tandem(["status", path, "--json"])
        #expect(status.stdout.contains("\"committed_through\":1,\"uploaded_through\":1,\"synced_through\":1"), "\(status.stdout)")
    }
}
