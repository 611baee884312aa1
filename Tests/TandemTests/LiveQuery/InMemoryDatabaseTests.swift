import Foundation
import Synchronization
import Testing
@testable import Tandem

/// ``InMemoryDatabase``: code written once against `DatabaseWriter` gives the same answers on
/// a file and in memory (records with adversarial values, SQL, search, import and export), and
/// the double's live queries, upload queue and misuse behave as a file's do.
@Suite struct InMemoryDatabaseTests {
    /// What an app's code might do with any writer: records in and out, SQL, a search, an
    /// export; returns everything it read, to compare across databases.
    static func exercise(_ db: some DatabaseWriter, samples: [Sample]) throws -> [String] {
        try db.insert(contentsOf: samples)
        var changed = samples[3]
        changed.title = "changed \u{0} title"
        changed.score = -0.0
        try db.update(changed)
        try db.delete(Sample.self, id: samples[5].id)
        let all = try db.fetch(Sample.self, sortBy: [SortDescriptor(\.id)])
        let filtered = try db.fetch(Sample.self, where: #Predicate { $0.count > 0 && $0.score != 2.0 }, sortBy: [SortDescriptor(\.id)])
        let rows = try db.fetchAll("SELECT id, title, count, score FROM sample ORDER BY id")
        let export = try db.exportJSON(table: "sample")
        return [
            String(describing: all.map(\.id)), String(describing: filtered.map(\.id)), String(describing: rows), String(decoding: export, as: UTF8.self),
            "\(try db.count(RecordQuery<Sample>()))",
        ]
    }

    @Test func codeWrittenAgainstTheProtocolAnswersAlikeOnAFileAndInMemory() throws {
        let samples = ExactnessSamples.records(count: 60)
        let dir = try TemporaryDirectory()
        let file = try SharedDatabase(path: dir.path("f.db"), schema: sampleSchema)
        let memory = try InMemoryDatabase(schema: sampleSchema)
        let onFile = try Self.exercise(file, samples: samples)
        let inMemory = try Self.exercise(memory, samples: samples)
        #expect(onFile == inMemory)
        // Every value reads back as written in memory too (int64 limits, -0.0, NUL, dates to the bit).
        var expected = samples
        expected[3].title = "changed \u{0} title"
        expected[3].score = -0.0
        expected.remove(at: 5)
        let read = try memory.fetch(Sample.self, sortBy: [SortDescriptor(\.id)])
        // Dates as seconds since 1970, the documented storage (`DateStorageTests`).
        func since1970(_ date: Date) -> Date { Date(timeIntervalSince1970: date.timeIntervalSince1970) }
        for n in expected.indices {
            expected[n].at = since1970(expected[n].at)
            expected[n].due = expected[n].due.map(since1970)
            if let at = expected[n].part?.at { expected[n].part?.at = since1970(at) }
        }
        #expect(read == expected)
        #expect(read[3].score.sign == .minus)
        // The double's export imports into the file unchanged (nothing to write).
        let result = try file.importJSON(try memory.exportJSON(table: "sample"), into: "sample")
        #expect(result.tables["sample"]?.inserted == 0 && result.tables["sample"]?.updated == 0)
    }

    @Test func writesQueueCRUDEntriesOneTransactionIDPerWrite() throws {
        let db = try InMemoryDatabase(schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title, score) VALUES ('a', 'x', 2.0)")
        try db.write { tx in
            try tx.execute("UPDATE notes SET title = 'y' WHERE id = 'a'")
            try tx.execute("INSERT INTO notes(id, title) VALUES ('b', '{\"not\": \"json\"}')")
        }
        let entries = try db.read { tx in try tx.fetchAll("SELECT tx_id, data FROM ps_crud ORDER BY id") }
        #expect(entries.count == 3)
        let ids = entries.compactMap { $0[0].int64Value }
        #expect(ids.count == 3 && ids[0] != ids[1] && ids[1] == ids[2])
        // An update writes only what changed.
        #expect(entries[1][1].stringValue?.contains("\"data\":{\"title\":\"y\"}") == true)
        #expect(try db.fetchAll("SELECT title, score FROM notes WHERE id = 'b'")[0][0] == .text("{\"not\": \"json\"}"))
    }

    @Test func liveQueriesFollowTheDoublesCommits() async throws {
        let db = try InMemoryDatabase(schema: sampleSchema)
        let seen = Mutex<[[String]]>([])
        let query = RecordQuery<Sample>(#Predicate { $0.count > 0 }, sortBy: [SortDescriptor(\.id)])
        let observation = try db.observe(query) { result in
            if case .success(let records) = result { seen.withLock { $0.append(records.map(\.id)) } }
        }
        try waitUntil("the first result") { seen.withLock { $0 } == [[]] }
        var first = ExactnessSamples.records(count: 1)[0]
        first.count = 1
        try db.insert(first)
        try waitUntil("the inserted record") { seen.withLock { $0.count } == 2 }
        // A record the predicate leaves out, and a change to another table, emit nothing.
        var other = first
        other.id = "left-out"
        other.count = -1
        try db.insert(other)
        try db.insert(Folder(id: "f9", name: "elsewhere"))
        first.title = "renamed"
        try db.update(first)
        try waitUntil("the update") { seen.withLock { $0.count } == 3 }
        #expect(seen.withLock { $0 } == [[], [first.id], [first.id]])
        observation.cancel()

        // The SQL live query and the async stream through the protocol.
        let reader: any DatabaseReader = db
        var iterator = reader.watch("SELECT count(*) FROM sample").makeAsyncIterator()
        #expect(try await iterator.next()?.first?[0] == .integer(2))
        try await db.write { tx in try tx.execute("DELETE FROM sample") }
        #expect(try await iterator.next()?.first?[0] == .integer(0))
    }

    @Test func liveQueriesSeeSchemaChangesAsOnAFile() throws {
        let dir = try TemporaryDirectory()
        let file = try SharedDatabase(path: dir.path("s.db"), schema: notesSchema)
        let memory = try InMemoryDatabase(schema: notesSchema)
        let databases: [any DatabaseWriter] = [file, memory]
        for db in databases {
            try db.execute("CREATE TABLE raw(x); INSERT INTO raw VALUES (1)")
            let seen = Mutex<[String]>([])
            let live = try db.observe("SELECT * FROM raw", []) { result in
                seen.withLock { $0.append((try? result.get()).map { "\($0.map { $0.values.compactMap(\.int64Value) })" } ?? "failed") }
            }
            try waitUntil("the first result") { seen.withLock { $0.count } == 1 }
            try db.execute("ALTER TABLE raw ADD COLUMN y DEFAULT 7")
            try waitUntil("the added column, \(db.path)") { seen.withLock { $0.last } == "[[1, 7]]" }
            try db.execute("DROP TABLE raw")
            try waitUntil("the query to end, \(db.path)") { seen.withLock { $0.last } == "failed" }
            live.cancel()
        }
    }

    @Test func aWatchEndsWhenItsDatabaseGoes() async throws {
        var memory: InMemoryDatabase? = try InMemoryDatabase(schema: notesSchema)
        let stream = memory!.watch("SELECT count(*) FROM notes")
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next() != nil)
        memory = nil
        await #expect(throws: TandemError.self, "released") { _ = try await iterator.next() }

        let dir = try TemporaryDirectory()
        let file = try SharedDatabase(path: dir.path("w.db"), schema: notesSchema)
        var onFile = file.watch("SELECT count(*) FROM notes").makeAsyncIterator()
        #expect(try await onFile.next() != nil)
        file.close()
        await #expect(throws: TandemError.self, "closed") { _ = try await onFile.next() }
    }

    @Test func searchAndImportWorkInMemory() throws {
        let db = try InMemoryDatabase(schema: searchSchema)
        let payload = #"[{"id": "n1", "title": "Buy milk", "body": "and bread", "pinned": 1}, {"id": "n2", "title": "Walk", "body": null, "pinned": 0}]"#
        let result = try db.importJSON(Data(payload.utf8), into: "searched_notes")
        #expect(result.tables["searched_notes"]?.inserted == 2)
        #expect(try db.search("searched_notes", matching: "bread").compactMap { $0["id"]?.stringValue } == ["n1"])
        #expect(try db.search(SearchedNote.self, matching: "walk").map(\.record.id) == ["n2"])
    }

    @Test func misuseAndBadSchemasAreRefused() throws {
        let db = try InMemoryDatabase(schema: notesSchema)
        #expect(throws: TandemError.self) { try db.write { _ in try db.execute("INSERT INTO notes(title) VALUES ('x')") } }
        #expect(throws: TandemError.self) { try db.read { _ in try db.fetchAll("SELECT 1") } }
        #expect(throws: TandemError.self) { try db.read { tx in try tx.execute("INSERT INTO notes(title) VALUES ('x')") } }
        // Nothing of the refused writes stayed; the double still works.
        #expect(try db.fetchAll("SELECT count(*) FROM notes")[0][0] == .integer(0))
        let bad = Schema(tables: [TableSchema(name: "ps_x", columns: [.text("a")])])
        #expect(throws: TandemError.self) { try InMemoryDatabase(schema: bad) }
    }
}
