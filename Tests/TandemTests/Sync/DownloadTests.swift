import Foundation
import Synchronization
import Testing
@testable import Tandem

@Suite struct DownloadTests {
    /// A backlog larger than one apply batch never shows, even for a moment, an older server
    /// value of a row over this client's own newer edit that it had already uploaded.
    @Test func aLargeBacklogNeverShowsOlderValues() throws {
        let dir = try TemporaryDirectory()
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        // B writes x three times, each with fillers around it; then A edits x and uploads.
        for round in 0..<3 {
            try b.execute("INSERT OR REPLACE INTO notes(id, title) VALUES ('x', ?)", ["old \(round)"])
            for i in 0..<4 { try b.execute("INSERT INTO notes(id, title) VALUES (?, 'filler')", ["f\(round)-\(i)"]) }
        }
        _ = try b.sync.once(with: backend)
        try a.execute("INSERT OR REPLACE INTO notes(id, title) VALUES ('x', 'mine')")
        var upload = SyncPass(database: a, backend: backend, epoch: 0, clientID: try a.clientID())
        var result = SyncPass.Result()
        try upload.upload(into: &result)
        #expect(try a.uploadQueue.pendingCount() == 0)
        // Now A downloads B's 15 changes and its own, two at a time, at most three in memory.
        let seen = Mutex<Set<String>>([])
        // Told on the committing thread before the write returns: each commit's state is read
        // before the next commit.
        let token = try a.addImmediateChangeHandler { _ in
            let title = (try? a.read { try $0.scalar("SELECT title FROM notes WHERE id = 'x'").stringValue }) ?? nil
            seen.withLock { _ = $0.insert(title ?? "nil") }
        }
        defer { token.cancel() }
        upload.downloadBatch = 2
        upload.maximumApply = 3
        try upload.download(into: &result)
        #expect(result.downloaded == 16)
        #expect(seen.withLock { $0 } == ["mine"])
        #expect(try count(a, "SELECT count(*) FROM notes") == 13)
        #expect(try count(a, "SELECT count(*) FROM ps_download") == 0)
    }

    /// A server holding B's row `from-b`, and A with 200 single-row transactions queued.
    private func backlogBesideAnotherClientsRow() throws -> (TemporaryDirectory, EmbeddedBackend, SharedDatabase) {
        let dir = try TemporaryDirectory()
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        try b.execute("INSERT INTO notes(id, title) VALUES ('from-b', 'b')")
        _ = try b.sync.once(with: backend)
        for i in 0..<200 { try a.execute("INSERT INTO notes(id, title) VALUES (?, 'a')", ["a\(i)"]) }
        return (dir, backend, a)
    }

    /// A pass with an upload time limit uploads at least one batch, then downloads, however
    /// much is still queued: another client's change arrives while A's backlog waits for the
    /// next pass.
    /// A full sync writes only the rows that differ from the server's: one that finds every row
    /// as it is here changes no row (no live query on the table wakes), and one that finds
    /// differences ends with exactly the server's rows plus the ones with pending uploads.
    @Test func aFullSyncWritesOnlyTheRowsThatDiffer() throws {
        let dir = try TemporaryDirectory()
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        for i in 1...5 { try a.execute("INSERT INTO notes(id, title, done, score) VALUES (?, ?, ?, ?)", ["n\(i)", "note \(i)", Int64(i), -0.0]) }
        _ = try a.sync.once(with: backend)
        _ = try b.sync.once(with: backend)
        let changed = Mutex<[Set<String>]>([])
        let token = try b.addImmediateChangeHandler { change in changed.withLock { $0.append(change.isUnknown ? ["?"] : change.tables) } }
        defer { token.cancel() }
        func fullSync() throws {
            try b.write { try $0.removeStored(.cursor) }
            changed.withLock { $0 = [] }
            let result = try b.sync.once(with: backend)
            #expect(result.downloaded > 0, "a full sync")
        }
        try fullSync()
        #expect(changed.withLock { $0 }.allSatisfy { !$0.contains("notes") && !$0.contains("?") }, "no commit wrote notes: \(changed.withLock { $0 })")

        try a.execute("UPDATE notes SET title = 'changed' WHERE id = 'n2'")
        try a.execute("DELETE FROM notes WHERE id = 'n3'")
        try a.execute("INSERT INTO notes(id, title) VALUES ('n6', 'new')")
        _ = try a.sync.once(with: backend)
        try b.execute("INSERT INTO notes(id, title) VALUES ('p1', 'pending here')")
        try b.execute("UPDATE notes SET title = 'pending edit' WHERE id = 'n4'")
        try b.write { try $0.removeStored(.cursor) }
        let result = try b.sync.once(with: backend)
        #expect(result.downloaded > 0)
        _ = try a.sync.once(with: backend)
        let rows = { (db: SharedDatabase) in try db.fetchAll("SELECT id, title, done, score FROM notes ORDER BY id").map { $0.values.map(\.description) } }
        #expect(try rows(b) == rows(a), "B ends with the server's rows, its pending ones uploaded")
        #expect(try b.fetchAll("SELECT title FROM notes WHERE id IN ('p1', 'n4') ORDER BY id").map { $0[0].stringValue } == ["pending edit", "pending here"])
    }

    @Test func aPassPastItsUploadTimeDownloadsBeforeUploadingTheRest() throws {
        let (dir, backend, a) = try backlogBesideAnotherClientsRow()
        defer { withExtendedLifetime(dir) {} }  // the files stay while the test runs
        var pass = SyncPass(database: a, backend: backend, epoch: 0, clientID: try a.clientID())
        pass.uploadBatch = 64  // fewer than are queued
        pass.uploadTimeLimit = .zero
        let result = try pass.run()
        #expect(result.transactions == pass.uploadBatch, "one batch, then the download")
        #expect(result.moreToUpload)
        #expect(try count(a, "SELECT count(*) FROM notes WHERE id = 'from-b'") == 1)
        #expect(try a.uploadQueue.pendingCount() == 200 - pass.uploadBatch)
        pass.uploadTimeLimit = nil
        _ = try pass.run()
        #expect(try a.uploadQueue.pendingCount() == 0)
    }

    /// A pass's uploads alone leave its download to a later pass (the engine runs the halves
    /// apart when its ``PassSchedule`` says so), whether or not they uploaded anything, and say
    /// whether more is queued.
    @Test func aPassMayLeaveItsDownloadToALaterOneWhenTheEngineLetsIt() throws {
        let (dir, backend, a) = try backlogBesideAnotherClientsRow()
        defer { withExtendedLifetime(dir) {} }  // the files stay while the test runs
        var pass = SyncPass(database: a, backend: backend, epoch: 0, clientID: try a.clientID())
        pass.uploadBatch = 64
        pass.uploadTimeLimit = .zero
        let deferred = try pass.uploads()
        #expect(deferred.transactions == 64 && deferred.moreToUpload, "told that more is queued")
        #expect(deferred.downloadBegan == nil && deferred.downloaded == 0)
        #expect(try a.read { try $0.stored(.cursor).stringValue } == nil, "nothing downloaded: the cursor has not moved")
        #expect(try count(a, "SELECT count(*) FROM notes WHERE id = 'from-b'") == 0)
        let downloaded = try pass.run()
        #expect(downloaded.downloadBegan != nil && downloaded.downloaded > 0)
        #expect(try count(a, "SELECT count(*) FROM notes WHERE id = 'from-b'") == 1)
        pass.uploadTimeLimit = nil
        let emptied = try pass.uploads()
        #expect(!emptied.moreToUpload && emptied.downloadBegan == nil, "the queue emptied, its answers left for later; told so")
        let nothing = try pass.uploads()
        #expect(nothing.transactions == 0 && !nothing.moreToUpload && nothing.downloadBegan == nil, "nothing uploaded, the answers still left")
        var last = try pass.uploads()
        try pass.downloads(after: &last)
        #expect(last.transactions == 0 && last.downloadBegan != nil && last.downloaded > 0, "nothing to upload: the pass downloads")
        #expect(try count(a, "SELECT count(*) FROM notes") == 201)
        #expect(try backend.fetchChanges(after: try #require(try a.read { try $0.stored(.cursor).stringValue }), limit: 10).changes.isEmpty)
    }

    /// An owner of a client that has synced before downloads in its first pass what another
    /// client did while no owner ran, with its own backlog still queued: only a client that has
    /// never synced leaves its first download until its backlog has gone up.
    @Test func aSyncedOwnersFirstPassDownloadsBeforeItsBacklogHasGoneUp() throws {
        let dir = try TemporaryDirectory()
        let a = try makeStressDatabase(dir.path("a.db")), b = try makeStressDatabase(dir.path("b.db"))
        let url = "sqlite:" + dir.path("server.db")
        try b.execute("INSERT INTO stress(id, writer) VALUES ('before', 99)")
        _ = try b.sync.once(with: try EmbeddedBackend(path: dir.path("server.db")))
        _ = try a.sync.once(with: try EmbeddedBackend(path: dir.path("server.db")))
        #expect(try count(a, "SELECT count(*) FROM stress WHERE id = 'before'") == 1, "A has synced")
        try b.execute("INSERT INTO stress(id, writer) VALUES ('from-b', 99)")
        _ = try b.sync.once(with: try EmbeddedBackend(path: dir.path("server.db")))
        let queued = 20_000
        #expect(try runTandem(["stress-writer", a.path, "--writer", "1", "--transactions", String(queued)]).status == 0)
        let app = try Spawned(["app", a.path, "--backend", url, "--json"])
        try app.waitForLine(timeout: 60, "A's first download") { $0.contains("\"downloaded\"") }
        let uploaded = app.output.filter { $0.contains("\"uploaded\"") }.count
        #expect(try count(a, "SELECT count(*) FROM stress WHERE id = 'from-b'") == 1)
        #expect(try a.uploadQueue.pendingCount() > 0, "B's row came while the backlog uploaded (\(uploaded) batches up)")
        try waitUntil(timeout: 60, "A's backlog up") { try a.uploadQueue.pendingCount() == 0 }
        app.signal(SIGTERM)
        #expect(try app.wait() == 0)
    }

    /// While a helper process commits 2,000 transactions/s on A, another client's change shows
    /// on A within 2 s; after the burst ends, within 1 s.
    @Test func downloadsDoNotStarveWhileAWriterIsBusy() throws {
        let dir = try TemporaryDirectory()
        let a = try makeStressDatabase(dir.path("a.db")), b = try makeStressDatabase(dir.path("b.db"))
        let url = "sqlite:" + dir.path("server.db")
        var apps: [Spawned] = []
        for db in [a, b] {
            let app = try Spawned(["app", db.path, "--backend", url, "--json"])
            try app.waitForLine("became_owner") { $0.contains("became_owner") }
            apps.append(app)
        }
        let writer = try Spawned(["stress-writer", a.path, "--writer", "1", "--transactions", "8000", "--interval-us", "500"])
        try writer.waitForLine("the 500th commit") { $0.hasPrefix("499 ") }
        let busy = try FidelityClock.measure {
            try b.execute("INSERT INTO stress(id, writer) VALUES ('from-b-1', 99)")
            try waitUntil(timeout: 2, "B's row on A while A's writer commits 2,000 tx/s") {
                try count(a, "SELECT count(*) FROM stress WHERE id = 'from-b-1'") == 1
            }
        }
        #expect(writer.isRunning, "the writer had finished before B's row arrived (\(busy) s)")
        #expect(try writer.wait() == 0)
        try b.execute("INSERT INTO stress(id, writer) VALUES ('from-b-2', 99)")
        try waitUntil(timeout: 1, "B's row on A within 1 s after the burst") {
            try count(a, "SELECT count(*) FROM stress WHERE id = 'from-b-2'") == 1
        }
        try waitUntil(timeout: 20, "A's rows on B") { try count(b, "SELECT count(*) FROM stress WHERE writer = 1") == 8000 }
        for app in apps { app.signal(SIGTERM); #expect(try app.wait() == 0) }
    }
}
