import Foundation
import Synchronization
import Testing
@testable import Tandem

/// Code written against `DatabaseWriter` and `DatabaseReader` works with a shared database:
/// writes queue for upload, a read-only database is a reader, and a live query through the
/// protocol is cancelled by its `DatabaseCancellable`.
@Suite struct DatabaseProtocolTests {
    static func addNote(_ writer: some DatabaseWriter, id: String) throws {
        try writer.write { tx in try tx.execute("INSERT INTO notes(id, title) VALUES (?, ?)", [id, "through the protocol"]) }
    }

    static func titles(_ reader: any DatabaseReader) throws -> [String] {
        try reader.fetchAll("SELECT title FROM notes ORDER BY id", []).compactMap { $0[0].stringValue }
    }

    @Test func aSharedDatabaseIsAWriterAndAReadOnlyOneAReader() async throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("p.db"), schema: notesSchema)
        try Self.addNote(db, id: "a")
        #expect(try db.uploadQueue.pendingCount() == 1)
        var configuration = Configuration()
        configuration.readOnly = true
        let reader: any DatabaseReader = try SharedDatabase(path: db.path, schema: nil, configuration: configuration)
        #expect(try Self.titles(reader) == ["through the protocol"])
        #expect(try await reader.read { try $0.scalar("SELECT count(*) FROM notes").int64Value } == 1)

        let seen = Mutex<[Int]>([])
        let observation: any DatabaseCancellable = try (db as any DatabaseReader).observe("SELECT id FROM notes", []) { result in
            if case .success(let rows) = result { seen.withLock { $0.append(rows.count) } }
        }
        try waitUntil("the first result") { seen.withLock { $0 } == [1] }
        observation.cancel()
        try Self.addNote(db, id: "b")
        try Self.addNote(db, id: "c")
        // A live query that is still running sees both; the cancelled one never does.
        let witness = Mutex<Int>(0)
        let running = try db.observe("SELECT id FROM notes") { result in if case .success(let rows) = result { witness.withLock { $0 = rows.count } } }
        try waitUntil("a running live query's result") { witness.withLock { $0 } == 3 }
        running.cancel()
        #expect(seen.withLock { $0 } == [1])
    }
}
