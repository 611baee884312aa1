import Foundation
import Synchronization
import Testing
@testable import Tandem

@Suite struct SyncRobustnessTests {
    /// An owner dies between uploading and completing while the sqlite3 shell keeps writing:
    /// the next owner's upload of the same transaction id must not hide the shell's new row.
    @Test func noUploadIsLostAfterACrashBetweenUploadAndComplete() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        try sqliteShell(db.path, "INSERT INTO notes(id, title) VALUES ('a', 'first')")
        try backend.upload(try db.uploadQueue.transactions(limit: 64), clientID: try db.clientID(), epoch: 0)  // then "dies"
        try sqliteShell(db.path, "INSERT INTO notes(id, title) VALUES ('b', 'second')")
        _ = try db.sync.once(with: backend)
        #expect(try backend.rows().map(\.id) == ["a", "b"])
        #expect(try db.uploadQueue.pendingCount() == 0)
    }

    /// `COMMIT` inside a write is refused even after the writer's own COMMIT was prepared.
    @Test func commitInsideAWriteNeverCommitsHalf() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('warm', 'up')")
        #expect(throws: TandemError.self) {
            try db.write { tx in
                try tx.execute("INSERT INTO notes(id, title) VALUES ('half', 'x')")
                try tx.execute("COMMIT")
            }
        }
        #expect(try count(db, "SELECT count(*) FROM notes WHERE id = 'half'") == 0)
    }

    /// Downloading a backlog never shows an older server value over this client's own uploaded write.
    @Test func downloadsDoNotRevertAnUploadedWriteBetweenBatches() throws {
        let dir = try TemporaryDirectory()
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        let b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        try b.execute("INSERT INTO notes(id, title) VALUES ('x', 'old')")
        for i in 0..<3 { try b.execute("INSERT INTO notes(id, title) VALUES (?, 'filler')", ["f\(i)"]) }
        _ = try b.sync.once(with: backend)
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try a.execute("INSERT INTO notes(id, title) VALUES ('x', 'mine')")
        let seen = Mutex<[String]>([])
        var pass = SyncPass(database: a, backend: backend, epoch: 0, clientID: try a.clientID())
        pass.downloadBatch = 1
        pass.onEvent = { event in
            if case .downloaded = event {
                let title = (try? a.read { try $0.scalar("SELECT title FROM notes WHERE id = 'x'").stringValue }) ?? nil
                seen.withLock { $0.append(title ?? "nil") }
            }
        }
        _ = try pass.run()
        #expect(seen.withLock { $0 } == ["mine"])
    }

    /// Rows downloaded for a table this database did not declare yet appear once it does.
    @Test func rowsOfALaterDeclaredTableAppear() throws {
        let dir = try TemporaryDirectory()
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        let both = Schema(tables: notesSchema.tables + [TableSchema(name: "todos", columns: [.text("what")])])
        let b = try SharedDatabase(path: dir.path("b.db"), schema: both)
        try b.execute("INSERT INTO todos(id, what) VALUES ('t1', 'buy milk')")
        _ = try b.sync.once(with: backend, backendName: "server")
        do {
            let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
            _ = try a.sync.once(with: backend, backendName: "server")
            #expect(try count(a, "SELECT count(*) FROM ps_untyped") == 1)
        }
        let upgraded = try SharedDatabase(path: dir.path("a.db"), schema: both)
        #expect(try upgraded.fetchAll("SELECT what FROM todos").first?[0] == .text("buy milk"))
        #expect(try count(upgraded, "SELECT count(*) FROM ps_untyped") == 0)
    }

    /// A stopped stand-by lets go of the database; a released owner lock is free at once.
    @Test func stoppingAStandByReleasesEverything() throws {
        let dir = try TemporaryDirectory()
        let holder = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let otherOwner = try FileLock(path: holder.files.ownerLock, mode: 0o600)
        try otherOwner.lock()
        weak var weakDatabase: SharedDatabase?
        do {
            let db = try SharedDatabase(path: dir.path("a.db"))
            weakDatabase = db
            let session = try db.sync.start(with: try EmbeddedBackend(path: dir.path("server.db")))
            session.stop()
        }
        try waitUntil(timeout: 3, "the stopped stand-by to release the database") { weakDatabase == nil }
        otherOwner.unlock()
        #expect(!FileLock.isHeld(path: holder.files.ownerLock))
    }

    /// When the backend has seen a newer epoch for this client (the file was restored from a
    /// backup), the owner steps down, raises the local epoch, wins the election again above the
    /// backend's epoch, and uploads.
    @Test func aClientBehindTheBackendsEpochRecovers() async throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        try sqliteShell(dir.path("server.db"), "INSERT INTO server_clients VALUES ('\(try db.clientID())', 100)")
        try db.execute("INSERT INTO notes(id, title) VALUES ('n', 'x')")
        let session = try db.sync.start(with: backend)
        let events = try await within(30, "the upload event") {
            var events: [SyncEvent] = []
            for await event in session.events {
                events.append(event)
                if case .uploaded = event { break }
            }
            return events
        }
        #expect(events.contains { if case .lostOwnership = $0 { return true } else { return false } }, "\(events)")
        #expect(events.contains(.becameOwner(epoch: 101)), "\(events)")
        #expect(try backend.rows().map(\.id) == ["n"])
        session.stop()
        #expect(!FileLock.isHeld(path: db.files.ownerLock))
    }

    /// A batch that mixes retries of applied transactions with new ones under reused ids (a
    /// restored file) renumbers only the new ones: the retries are not applied a second time.
    @Test func renumberingKeepsRetriesOut() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db"), backup = dir.path("backup.db")
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        let b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        do {
            let a = try SharedDatabase(path: path, schema: notesSchema)
            try a.execute("INSERT INTO notes(id, title) VALUES ('x', 'from a')")
            try sqliteShell(path, ".backup '\(backup)'")  // tx 1 still queued in the backup
            _ = try a.sync.once(with: backend)
            _ = try b.sync.once(with: backend)
            try b.execute("UPDATE notes SET title = 'from b' WHERE id = 'x'")
            _ = try b.sync.once(with: backend)
            try a.execute("INSERT INTO notes(id, title) VALUES ('y', 'a again')")
            _ = try a.sync.once(with: backend)
        }
        try restore(backup, to: path)
        let restored = try SharedDatabase(path: path)
        try restored.execute("INSERT INTO notes(id, title) VALUES ('z', 'after restore')")
        _ = try restored.sync.once(with: backend)
        let server = try backend.rows()
        #expect(server.map(\.id) == ["x", "y", "z"])
        let uploads = try SharedDatabase(path: dir.path("server.db")).fetchAll("SELECT client_id, tx_id, txn, digest FROM server_uploads")
        #expect(server.first?.data.contains("from b") == true, "a retry overwrote a newer write: \(server) \(uploads)")
    }

    @Test func aNestedWriteOnOneThreadThrows() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        #expect(throws: TandemError.self) {
            try db.write { _ in try db.write { try $0.execute("INSERT INTO notes(title) VALUES ('x')") } }
        }
        try db.execute("INSERT INTO notes(title) VALUES ('after')")
        #expect(try count(db, "SELECT count(*) FROM notes") == 1)
    }

    @Test func generatedIndexNamesMustNotCollide() {
        let schema = Schema(tables: [
            TableSchema(name: "a", columns: [.text("z")], indexes: [IndexSchema(name: "b__c", columns: ["z"])]),
            TableSchema(name: "a__b", columns: [.text("c")], indexes: [IndexSchema(name: "c", columns: ["c"])]),
        ])
        #expect(
            throws: TandemError.invalidSchema(
                SchemaProblem(.duplicate, table: "a__b", "index 'a__b.c' and index 'a.b__c' would share the SQLite name 'ps_index__a__b__c'; rename one"))
        ) {
            try schema.validate()
        }
    }
}
