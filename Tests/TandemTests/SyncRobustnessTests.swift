import Foundation
import Synchronization
import Testing
@testable import Tandem

/// Replaces a closed database file (and its WAL) with a backup copy, as restoring from a backup does.
private func restore(_ backup: String, to path: String) throws {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    try FileManager.default.copyItem(atPath: backup, toPath: path)
}

private func sqliteShell(_ path: String, _ sql: String) throws {
    let shell = try Spawned(executable: "/usr/bin/sqlite3", [path, sql])
    guard try shell.wait() == 0 else { throw TestFailure("sqlite3 failed: \(sql): \(shell.stderr)") }
}

@Suite struct SyncRobustnessTests {
    /// An owner dies between uploading and completing while the sqlite3 shell keeps writing:
    /// the next owner's upload of the same transaction id must not hide the shell's new row.
    @Test func noUploadIsLostAfterACrashBetweenUploadAndComplete() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        try sqliteShell(db.path, "INSERT INTO notes(id, title) VALUES ('a', 'first')")
        try backend.upload(try db.crudTransactions(limit: 64), clientID: try db.clientID(), epoch: 0)  // then "dies"
        try sqliteShell(db.path, "INSERT INTO notes(id, title) VALUES ('b', 'second')")
        _ = try db.syncOnce(with: backend)
        #expect(try backend.rows().map(\.id) == ["a", "b"])
        #expect(try db.pendingUploadCount() == 0)
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
        _ = try b.syncOnce(with: backend)
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
        _ = try b.syncOnce(with: backend, backendName: "server")
        do {
            let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
            _ = try a.syncOnce(with: backend, backendName: "server")
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
        let otherOwner = try FileLock(path: holder.ownerLockPath, mode: 0o600)
        try otherOwner.lock()
        weak var weakDatabase: SharedDatabase?
        do {
            let db = try SharedDatabase(path: dir.path("a.db"))
            weakDatabase = db
            let session = try db.sync(with: try EmbeddedBackend(path: dir.path("server.db")))
            session.stop()
        }
        try waitUntil(timeout: 3, "the stopped stand-by to release the database") { weakDatabase == nil }
        otherOwner.unlock()
        #expect(!FileLock.isHeld(path: holder.ownerLockPath))
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
        let session = try db.sync(with: backend)
        var events: [SyncEvent] = []
        for await event in session.events {
            events.append(event)
            if case .uploaded = event { break }
        }
        #expect(events.contains { if case .lostOwnership = $0 { return true } else { return false } }, "\(events)")
        #expect(events.contains(.becameOwner(epoch: 101)), "\(events)")
        #expect(try backend.rows().map(\.id) == ["n"])
        session.stop()
        #expect(!FileLock.isHeld(path: db.ownerLockPath))
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
            _ = try a.syncOnce(with: backend)
            _ = try b.syncOnce(with: backend)
            try b.execute("UPDATE notes SET title = 'from b' WHERE id = 'x'")
            _ = try b.syncOnce(with: backend)
            try a.execute("INSERT INTO notes(id, title) VALUES ('y', 'a again')")
            _ = try a.syncOnce(with: backend)
        }
        try restore(backup, to: path)
        let restored = try SharedDatabase(path: path)
        try restored.execute("INSERT INTO notes(id, title) VALUES ('z', 'after restore')")
        _ = try restored.syncOnce(with: backend)
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
        #expect(throws: TandemError.invalidSchema("index 'a__b.c' and index 'a.b__c' would share the SQLite name 'ps_index__a__b__c'; rename one")) {
            try schema.validate()
        }
    }
}

@Suite struct ConvergenceTests {
    /// A client file restored from a backup reuses transaction ids the backend has applied; its
    /// new writes must still arrive (the queue is renumbered past the backend's highest id).
    @Test func aRestoredClientStillUploadsItsNewWrites() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db"), backup = dir.path("backup.db")
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        do {
            let a = try SharedDatabase(path: path, schema: notesSchema)
            try a.execute("INSERT INTO notes(id, title) VALUES ('a1', 'x')")
            _ = try a.syncOnce(with: backend)
            try sqliteShell(path, ".backup '\(backup)'")
            try a.execute("INSERT INTO notes(id, title) VALUES ('a2', 'x')")
            _ = try a.syncOnce(with: backend)
        }
        try restore(backup, to: path)
        let restored = try SharedDatabase(path: path)
        try restored.execute("INSERT INTO notes(id, title) VALUES ('after_restore', 'x')")
        _ = try restored.syncOnce(with: backend)
        #expect(try backend.rows().map(\.id) == ["a1", "a2", "after_restore"])
        #expect(try restored.pendingUploadCount() == 0)
    }

    /// Changes downloaded while a table is dropped from the schema (its data kept) reach it.
    @Test func aDroppedAndRedeclaredTableStaysCurrent() throws {
        let dir = try TemporaryDirectory()
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        let tags = TableSchema(name: "tags", columns: [.text("label")])
        let withTags = Schema(tables: notesSchema.tables + [tags])
        let a = try SharedDatabase(path: dir.path("a.db"), schema: withTags)
        try a.execute("INSERT INTO tags(id, label) VALUES ('g1', 'L'), ('g2', 'L')")
        _ = try a.syncOnce(with: backend)
        do {
            let b = try SharedDatabase(path: dir.path("b.db"), schema: withTags)
            _ = try b.syncOnce(with: backend)
        }
        do { _ = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema) }  // tags dropped on b
        try a.execute("DELETE FROM tags WHERE id = 'g2'")
        try a.execute("UPDATE tags SET label = 'M' WHERE id = 'g1'")
        _ = try a.syncOnce(with: backend)
        do { _ = try SharedDatabase(path: dir.path("b.db")).syncOnce(with: backend) }
        let b = try SharedDatabase(path: dir.path("b.db"), schema: withTags)  // tags back
        let query = "SELECT id, label FROM tags ORDER BY id"
        #expect(try b.fetchAll(query) == a.fetchAll(query))
    }

    /// Switching a table from local-only to synced keeps what was downloaded meanwhile and
    /// uploads the local rows, so both clients converge.
    @Test func switchingLocalOnlyToSyncedConverges() throws {
        let dir = try TemporaryDirectory()
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        let items = TableSchema(name: "items", columns: [.text("t")])
        var localItems = items
        localItems.localOnly = true
        let a = try SharedDatabase(path: dir.path("a.db"), schema: Schema(tables: [items]))
        try a.execute("INSERT INTO items(id, t) VALUES ('x', '1')")
        _ = try a.syncOnce(with: backend)
        do { _ = try SharedDatabase(path: dir.path("b.db"), schema: Schema(tables: [items])).syncOnce(with: backend) }
        do { _ = try SharedDatabase(path: dir.path("b.db"), schema: Schema(tables: [localItems])) }
        try a.execute("INSERT INTO items(id, t) VALUES ('z', '1')")
        _ = try a.syncOnce(with: backend)
        do {
            let b = try SharedDatabase(path: dir.path("b.db"))
            _ = try b.syncOnce(with: backend)
            try b.execute("INSERT INTO items(id, t) VALUES ('w', 'local')")
        }
        let b = try SharedDatabase(path: dir.path("b.db"), schema: Schema(tables: [items]))
        _ = try b.syncOnce(with: backend)
        _ = try a.syncOnce(with: backend)
        let query = "SELECT id, t FROM items ORDER BY id"
        #expect(try a.fetchAll(query) == b.fetchAll(query))
        #expect(try a.fetchAll(query).map { $0[0].stringValue ?? "" } == ["w", "x", "z"])
    }
}

@Suite struct SyncPrecisionTests {
    @Test func realsArriveOnAnotherClientExactly() throws {
        let dir = try TemporaryDirectory()
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        try a.execute("INSERT INTO notes(id, score) VALUES ('r', ?)", [0.1 + 0.2])
        try a.execute("UPDATE notes SET score = ? WHERE id = 'r'", [1.0 / 3.0])
        _ = try a.syncOnce(with: backend)
        _ = try b.syncOnce(with: backend)
        #expect(try b.fetchAll("SELECT score FROM notes").first?[0] == .real(1.0 / 3.0))
    }
}

@Suite struct InsertOnlySwitchTests {
    /// synced → insert-only → synced: deletes and updates made elsewhere meanwhile arrive.
    @Test func switchingThroughInsertOnlyConverges() throws {
        let dir = try TemporaryDirectory()
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        let items = TableSchema(name: "items", columns: [.text("t")])
        var insertOnly = items
        insertOnly.insertOnly = true
        let a = try SharedDatabase(path: dir.path("a.db"), schema: Schema(tables: [items]))
        try a.execute("INSERT INTO items(id, t) VALUES ('x', '1'), ('y', '1')")
        _ = try a.syncOnce(with: backend)
        do { _ = try SharedDatabase(path: dir.path("b.db"), schema: Schema(tables: [items])).syncOnce(with: backend) }
        do {
            let b = try SharedDatabase(path: dir.path("b.db"), schema: Schema(tables: [insertOnly]))
            #expect(try count(b, "SELECT count(*) FROM items") == 0, "an insert-only table keeps no local rows")
        }
        try a.execute("DELETE FROM items WHERE id = 'y'; UPDATE items SET t = '2' WHERE id = 'x'")
        _ = try a.syncOnce(with: backend)
        do { _ = try SharedDatabase(path: dir.path("b.db")).syncOnce(with: backend) }
        let b = try SharedDatabase(path: dir.path("b.db"), schema: Schema(tables: [items]))
        let query = "SELECT id, t FROM items ORDER BY id"
        #expect(try b.fetchAll(query) == a.fetchAll(query))
    }
}
