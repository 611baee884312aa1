import Foundation
import Synchronization
import Testing
@testable import Tandem

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
            _ = try a.sync.once(with: backend)
            try sqliteShell(path, ".backup '\(backup)'")
            try a.execute("INSERT INTO notes(id, title) VALUES ('a2', 'x')")
            _ = try a.sync.once(with: backend)
        }
        try restore(backup, to: path)
        let restored = try SharedDatabase(path: path)
        try restored.execute("INSERT INTO notes(id, title) VALUES ('after_restore', 'x')")
        _ = try restored.sync.once(with: backend)
        #expect(try backend.rows().map(\.id) == ["a1", "a2", "after_restore"])
        #expect(try restored.uploadQueue.pendingCount() == 0)
    }

    /// Changes downloaded while a table is dropped from the schema (its data kept) reach it.
    @Test func aDroppedAndRedeclaredTableStaysCurrent() throws {
        let dir = try TemporaryDirectory()
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        let tags = TableSchema(name: "tags", columns: [.text("label")])
        let withTags = Schema(tables: notesSchema.tables + [tags])
        let a = try SharedDatabase(path: dir.path("a.db"), schema: withTags)
        try a.execute("INSERT INTO tags(id, label) VALUES ('g1', 'L'), ('g2', 'L')")
        _ = try a.sync.once(with: backend)
        do {
            let b = try SharedDatabase(path: dir.path("b.db"), schema: withTags)
            _ = try b.sync.once(with: backend)
        }
        do { _ = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema) }  // tags dropped on b
        try a.execute("DELETE FROM tags WHERE id = 'g2'")
        try a.execute("UPDATE tags SET label = 'M' WHERE id = 'g1'")
        _ = try a.sync.once(with: backend)
        do { _ = try SharedDatabase(path: dir.path("b.db")).sync.once(with: backend) }
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
        _ = try a.sync.once(with: backend)
        do { _ = try SharedDatabase(path: dir.path("b.db"), schema: Schema(tables: [items])).sync.once(with: backend) }
        do { _ = try SharedDatabase(path: dir.path("b.db"), schema: Schema(tables: [localItems])) }
        try a.execute("INSERT INTO items(id, t) VALUES ('z', '1')")
        _ = try a.sync.once(with: backend)
        do {
            let b = try SharedDatabase(path: dir.path("b.db"))
            _ = try b.sync.once(with: backend)
            try b.execute("INSERT INTO items(id, t) VALUES ('w', 'local')")
        }
        let b = try SharedDatabase(path: dir.path("b.db"), schema: Schema(tables: [items]))
        _ = try b.sync.once(with: backend)
        _ = try a.sync.once(with: backend)
        let query = "SELECT id, t FROM items ORDER BY id"
        #expect(try a.fetchAll(query) == b.fetchAll(query))
        #expect(try a.fetchAll(query).map { $0[0].stringValue ?? "" } == ["w", "x", "z"])
    }
}
