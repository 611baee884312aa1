import Foundation
import Synchronization
import Testing
@testable import Tandem

enum Priority: String, Codable, CaseIterable, Sendable { case low, normal, high }

struct Meta: Codable, Hashable, Sendable { var tags: [String]; var at: Date }

/// A record with every mapped type.
struct TodoItem: Record, Equatable {
    var id = ""
    var title: String
    var count = 0
    var score = 0.0
    var done = false
    var note: String?
    var due: Date?
    var priority = Priority.normal
    var tag: UUID?
    var attachment: Data?
    var meta: Meta?
    var folder_id: String?
    /// To-one: loaded from `folder_id`.
    var folder: Folder? = nil
}

struct Folder: Record, Equatable {
    var id = ""
    var name: String
}

/// A record whose Codable key differs from its property name.
struct Renamed: Record {
    var id = ""
    var title: String
    enum CodingKeys: String, CodingKey { case id, title = "name" }
    static var tableName: String { "folder" }
}

/// A record with a property its table does not declare.
struct Extra: Record {
    var id = ""
    var name: String
    var color: String
    static var tableName: String { "folder" }
}

/// A record whose table the database does not declare.
struct Missing: Record { var id = "" }

let recordSchema: Schema = {
    do { return try Schema(records: [RecordTable(TodoItem.self), RecordTable(Folder.self)]) } catch { fatalError("\(error)") }
}()

@Suite struct RecordTests {
    let dir: TemporaryDirectory
    let db: SharedDatabase

    init() throws {
        dir = try TemporaryDirectory()
        db = try SharedDatabase(path: dir.path("records.db"), schema: recordSchema)
    }

    @Test func theSchemaIsDerivedFromTheRecordTypes() throws {
        let table = try #require(recordSchema.table(named: "todo_item"))
        #expect(
            table.columns.map { "\($0.name):\($0.type.rawValue)" } == [
                "title:text", "count:integer", "score:real", "done:integer", "note:text", "due:real", "priority:text",
                "tag:text", "attachment:text", "meta:text", "folder_id:text",
            ])
        #expect(table.indexes == [IndexSchema(name: "by_folder_id", columns: ["folder_id"])])
        #expect(RecordLayout.snakeCase("TodoItem") == "todo_item" && RecordLayout.snakeCase("URLRequest") == "url_request")
    }

    @Test func recordsRoundTripExactly() throws {
        let meta = Meta(tags: ["a", "\u{0}", "{}"], at: Date(timeIntervalSince1970: 1_700_000_000))
        let original = TodoItem(
            title: "a\u{0}b ✓ '%_\\", count: .min, score: -0.0, done: true, note: "2.0", due: Date(timeIntervalSince1970: 0.1),
            priority: .high, tag: UUID(), attachment: Data([0, 255, 1]), meta: meta, folder_id: nil)
        let stored = try db.insert(original)
        #expect(!stored.id.isEmpty && stored.id == stored.id.lowercased())
        let fetched = try #require(try db.fetch(TodoItem.self, id: stored.id))
        #expect(fetched == stored)
        #expect(fetched.score.sign == .minus)
        let row = try #require(try db.fetchAll("SELECT * FROM todo_item").first)
        #expect(row["tag"] == .text(original.tag!.uuidString.lowercased()))
        #expect(row["attachment"] == .text("AP8B"))
        #expect(row["due"] == .real(original.due!.timeIntervalSince1970))
        #expect(row["done"] == .integer(1))
    }

    @Test func updatesWriteOnlyChangedColumnsAsOnePatch() throws {
        var item = try db.insert(TodoItem(title: "first", count: 1))
        item.count = 2
        item.note = "added"
        try db.update(item)
        let entries = try db.uploadQueue.transactions(limit: 10).flatMap(\.entries)
        #expect(entries.map(\.op) == [.put, .patch])
        #expect(entries.last?.data == ["count": .integer(2), "note": .string("added")])
        try db.update(item)  // nothing changed: nothing queued
        #expect(try db.uploadQueue.pendingCount() == 2)
        var moved = item
        moved.id = "another"
        #expect(throws: TandemError.self) { try db.update(moved) }
        try db.upsert(moved)
        #expect(try db.count(RecordQuery<TodoItem>()) == 2)
        #expect(try db.delete(TodoItem.self, where: #Predicate { $0.id == "another" }) == 1)
        #expect(try db.delete(TodoItem.self, id: item.id))
        #expect(try db.count(RecordQuery<TodoItem>()) == 0)
    }

    @Test func driftAndMismatchNameTheTypeAndProperty() throws {
        #expect(throws: TandemError.invalidRecord("Renamed.title is not a column of folder (its Codable keys are id, name); map it in Renamed.keyPathColumns")) {
            try db.fetch(RecordQuery<Renamed>(#Predicate { $0.title == "x" }))
        }
        #expect(throws: TandemError.invalidRecord("Extra.color has no column in table folder of '\(db.path)'; upgrade the schema to declare it")) {
            try db.insert(Extra(name: "x", color: "red"))
        }
        #expect(throws: TandemError.self) { try db.fetch(RecordQuery<Missing>()) }
    }

    @Test func relatedRecordsComeInOneQuery() throws {
        let inbox = try db.insert(Folder(name: "Inbox")), later = try db.insert(Folder(name: "Later"))
        for (title, folder) in [("a", inbox), ("b", inbox), ("c", later)] {
            try db.insert(TodoItem(title: title, folder_id: folder.id))
        }
        let related = try db.fetchRelated(TodoItem.self, by: \.folder_id, in: [inbox.id, later.id])
        #expect(related[inbox.id]?.map(\.title).sorted() == ["a", "b"])
        #expect(related[later.id]?.map(\.title) == ["c"])
    }

    @Test func asyncWritesRunOffThePoolAndWaitsCanBeCancelled() async throws {
        let item = try await db.write { try $0.insert(TodoItem(title: "async")) }
        #expect(try await db.read { try $0.fetch(TodoItem.self, id: item.id) } == item)
        let holder = try Spawned(testSupport: ["hold", db.path, "--seconds", "5"])
        try holder.waitForLine("locked") { $0 == "locked" }
        let database = db
        let waiting = Task { try await database.write { try $0.insert(TodoItem(title: "never")) } }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        holder.signal(SIGKILL)
        #expect(try db.count(RecordQuery<TodoItem>(#Predicate { $0.title == "never" })) == 0)
    }

    /// On the main actor, where `LiveResults` delivers.
    @MainActor @Test func liveResultsFollowWritesOfOtherProcesses() async throws {
        let live = try LiveResults(db, RecordQuery<TodoItem>(#Predicate { !$0.done }, sortBy: [SortDescriptor(\.title)]))
        try await waitOnMainActor("the first results") { live.records.isEmpty && live.error == nil }
        #expect(
            try runTandem([
                "exec", db.path,
                "INSERT INTO todo_item(id, title, count, score, done, priority) VALUES ('h1', 'from a helper', 0, 0.0, 0, 'low'), ('h2', 'done', 0, 0.0, 1, 'low')",
            ]).status == 0)
        try await waitOnMainActor("the helper's open item") { live.records.map(\.id) == ["h1"] }
        withExtendedLifetime(live) {}
    }

    /// A row whose non-optional property is NULL (written by SQL that left it out) fails the
    /// fetch with an error naming the type, the property and the row, never a trap.
    @Test func aMissingRequiredValueIsADescriptiveError() throws {
        try db.execute("INSERT INTO todo_item(id, title) VALUES ('bare', 'x')")
        #expect(
            throws: TandemError.invalidRecord(
                "TodoItem.count is NULL or missing (row 'bare') but the property is not optional; make it optional, give it a default in a DefaultedRecord, or store a value")
        ) {
            try db.fetch(TodoItem.self, id: "bare")
        }
    }

    /// About time: a throttled live query delivers at most one result per interval, the latest last.
    @Test func aThrottledLiveQueryDeliversTheLatestAtMostOncePerInterval() throws {
        let counts = Mutex<[Int]>([])
        let start = nowMicroseconds()
        let observation = try db.observe(RecordQuery<TodoItem>(), throttle: .milliseconds(200)) { result in
            if case .success(let items) = result { counts.withLock { $0.append(items.count) } }
        }
        for n in 0..<20 { try db.insert(TodoItem(title: "t\(n)")) }
        try waitUntil("the latest result") { counts.withLock { $0.last } == 20 }
        let elapsed = Double(nowMicroseconds() - start) / 1e6
        let delivered = counts.withLock { $0 }
        #expect(delivered.count <= 2 + Int(elapsed / 0.2), "\(delivered.count) results in \(elapsed) s")
        withExtendedLifetime(observation) {}
    }

    /// A typed stream in this process settles on records another process writes.
    @Test func typedLiveQuerySeesOtherProcesses() async throws {
        var stream = db.watch(RecordQuery<TodoItem>(#Predicate { $0.count > 1 }, sortBy: [SortDescriptor(\.count, order: .reverse)])).makeAsyncIterator()
        #expect(try await stream.next(within: 10, "the initial result") == [])
        for n in 1...3 {
            #expect(
                try runTandem(["exec", db.path, "INSERT INTO todo_item(id, title, count, score, done, priority) VALUES (?, 't', ?, 1.5, 0, 'high')", "p\(n)", "\(n)"]).status == 0)
        }
        var last: [TodoItem] = []
        while last.map(\.id) != ["p3", "p2"] {
            guard let next = try await stream.next(within: 10, "the other process's records (last: \(last.map(\.id)))") else {
                Issue.record("the stream ended at \(last.map(\.id))")
                break
            }
            last = next
        }
        var one = db.watch(TodoItem.self, id: "p2").makeAsyncIterator()
        #expect(try await one.next(within: 10, "record p2")??.count == 2)
    }
}
