import Foundation
import Synchronization
import Testing
@testable import Tandem

struct Room: Record, Equatable {
    var id = ""
    var name: String
}

struct Shelf: Record, Equatable {
    var id = ""
    var name: String
    var room_id: String?
    var room: Room? = nil
}

struct Book: Record, Equatable {
    var id = ""
    var title: String
    var shelf_id: String?
    var shelf: Shelf? = nil
}

/// A relationship without its `…_id` column.
struct Orphan: Record {
    var id = ""
    var shelf: Shelf?
}

/// A relationship that is not optional.
struct Strict: Record {
    var id = ""
    var shelf_id: String?
    var shelf: Shelf
}

/// A relationship and its id column under other Codable keys, mapped for key paths.
struct Crate: Record, Equatable {
    var id = ""
    var label: String
    var place: String?
    var location: Room? = nil
    enum CodingKeys: String, CodingKey { case id, label, place = "room_id", location = "room" }
    static var keyPathColumns: [String: String] { ["place": "room_id", "location": "room"] }
}

/// A renamed relationship whose target has a relationship of its own.
struct Tome: Record {
    var id = ""
    var rack_id: String?
    var shelf: Shelf? = nil
    enum CodingKeys: String, CodingKey { case id, rack_id, shelf = "rack" }
    static var keyPathColumns: [String: String] { ["shelf": "rack"] }
}

/// A target with a column named like the relationship's id column.
struct Annex: Record, Equatable {
    var id = ""
    var name: String
    var annex_id: String?
}

/// A table whose name a subquery alias could have taken.
struct Wing: Record {
    var id = ""
    var annex_id: String?
    var annex: Annex? = nil
    static var tableName: String { "r1" }
}

/// To-one relationships: stored as `{name}_id`, loaded one level deep in one query per
/// relationship, followed by predicates through subqueries.
@Suite struct RelationshipTests {
    let dir: TemporaryDirectory
    let db: SharedDatabase

    init() throws {
        dir = try TemporaryDirectory()
        db = try SharedDatabase(path: dir.path("books.db"), records: [RecordTable(Room.self), RecordTable(Shelf.self), RecordTable(Book.self)])
    }

    @Test func aRelationshipIsItsIdColumnIndexed() throws {
        let table = try #require(try Schema(records: [RecordTable(Book.self)]).table(named: "book"))
        #expect(table.columns.map(\.name) == ["title", "shelf_id"])
        #expect(table.indexes == [IndexSchema(name: "by_shelf_id", columns: ["shelf_id"])])
        #expect(
            throws: TandemError.invalidRecord(
                "Orphan.shelf is a to-one relationship to Shelf, stored as its id in the text column shelf_id; declare `var shelf_id: String?` in Orphan")
        ) {
            try Schema(records: [RecordTable(Orphan.self)])
        }
        #expect(throws: TandemError.self) { try Schema(records: [RecordTable(Strict.self)]) }
    }

    @Test func fetchesLoadRelatedRecordsOneLevelDeep() throws {
        let attic = try db.insert(Room(name: "attic"))
        let shelf = try db.insert(Shelf(name: "poetry", room_id: attic.id))
        try db.insert(Book(id: "b1", title: "Odes", shelf_id: shelf.id))
        try db.insert(Book(id: "b2", title: "Lost", shelf_id: "no-such-shelf"))
        try db.insert(Book(id: "b3", title: "Loose", shelf_id: nil))
        let books = try db.fetch(RecordQuery<Book>(sortBy: [SortDescriptor(\.id)]))
        #expect(books.map(\.shelf) == [shelf, nil, nil])
        #expect(books[0].shelf?.room == nil && books[0].shelf?.room_id == attic.id, "the related record's own relationships are not loaded")
        #expect(books[1].shelf_id == "no-such-shelf", "a dangling id stays as stored")
        #expect(try db.fetch(Book.self, id: "b1")?.shelf == shelf)
        #expect(try db.fetch(Shelf.self, id: shelf.id)?.room == attic)

        // Writing a fetched record writes only what changed; the loaded relationship is not a column.
        var lost = books[1]
        lost.title = "Found"
        try db.update(lost)
        let entries = try db.uploadQueue.transactions(limit: 20).flatMap(\.entries)
        #expect(entries.last?.data == ["title": .string("Found")])
        #expect(try db.fetchAll("SELECT shelf_id FROM book WHERE id = 'b2'")[0]["shelf_id"] == .text("no-such-shelf"))
    }

    @Test func predicatesFollowARelationshipInSQL() throws {
        let attic = try db.insert(Room(name: "attic"))
        let poetry = try db.insert(Shelf(name: "poetry", room_id: attic.id)), prose = try db.insert(Shelf(name: "Poetry"))
        for (id, shelf) in [("b1", poetry.id), ("b2", prose.id), ("b3", "dangling"), ("b4", nil)] as [(String, String?)] {
            try db.insert(Book(id: id, title: id, shelf_id: shelf))
        }
        let onPoetry = RecordQuery<Book>(#Predicate { $0.shelf?.name == "poetry" })
        #expect(try db.fetch(onPoetry).map(\.id) == ["b1"])
        #expect(try db.count(onPoetry) == 1, "count needs SQL: the chain translated to a subquery")
        #expect(try db.ids(RecordQuery<Book>(#Predicate { $0.shelf == nil })) == ["b3", "b4"])
        #expect(try db.ids(RecordQuery<Book>(#Predicate { $0.shelf?.name != "poetry" })) == ["b2", "b3", "b4"])
        #expect(try db.delete(Book.self, where: #Predicate { $0.shelf?.name.starts(with: "P") == true }) == 1)
        #expect(try db.ids(RecordQuery<Book>()) == ["b1", "b3", "b4"])

        // Followed one level only: deeper chains are refused wherever they are evaluated.
        let deep = TandemError.invalidRecord("Book: the predicate follows Shelf.room, a relationship of a related record; relationships are followed one level deep")
        #expect(throws: deep) { try db.fetch(RecordQuery<Book>(#Predicate { $0.shelf?.room?.name == "attic" })) }
        #expect(throws: deep) { try db.fetch(RecordQuery<Book>(#Predicate { $0.title.count > 1 || $0.shelf?.room?.name == "attic" })) }
        #expect(throws: TandemError.self) { try db.fetch(RecordQuery<Book>(sortBy: [SortDescriptor(\.shelf?.room?.name)])) }
        #expect(try db.fetch(RecordQuery<Shelf>(#Predicate { $0.room?.name == "attic" })).map(\.id) == [poetry.id])
    }

    @Test func renamedRelationshipsTranslateAndAreCheckedForDepth() throws {
        let db = try SharedDatabase(
            path: dir.path("renamed.db"),
            records: [
                RecordTable(Room.self), RecordTable(Shelf.self), RecordTable(Crate.self), RecordTable(Tome.self), RecordTable(Annex.self), RecordTable(Wing.self),
            ])
        let attic = try db.insert(Room(name: "attic"))
        try db.insert(Crate(id: "c1", label: "in the attic", place: attic.id))
        try db.insert(Crate(id: "c2", label: "nowhere", place: nil))
        #expect(try db.fetch(Crate.self, id: "c1")?.location == attic)
        #expect(try db.count(RecordQuery<Crate>(#Predicate { $0.location?.name == "attic" })) == 1)
        #expect(try db.ids(RecordQuery<Crate>(#Predicate { $0.location == nil })) == ["c2"])
        let shelf = try db.insert(Shelf(name: "poetry", room_id: attic.id))
        try db.insert(Tome(id: "t1", rack_id: shelf.id))
        #expect(throws: TandemError.invalidRecord("Tome: the predicate follows Shelf.room, a relationship of a related record; relationships are followed one level deep")) {
            try db.fetch(RecordQuery<Tome>(#Predicate { $0.shelf?.room?.name == "attic" }))
        }
        #expect(throws: TandemError.self) { try db.fetch(RecordQuery<Tome>(sortBy: [SortDescriptor(\.shelf?.room?.name)])) }

        // A table named like a subquery alias, and a target with a column named like the id column.
        let small = try db.insert(Annex(name: "small", annex_id: "elsewhere"))
        try db.insert(Wing(id: "w1", annex_id: small.id))
        #expect(try db.ids(RecordQuery<Wing>(#Predicate { $0.annex?.name == "small" })) == ["w1"])
        #expect(try db.ids(RecordQuery<Wing>(#Predicate { $0.annex == nil })) == [])
    }

    @Test func liveQueriesWakeForChangesToRelatedRecords() throws {
        let shelf = try db.insert(Shelf(name: "poetry"))
        try db.insert(Book(id: "b1", title: "Odes", shelf_id: shelf.id))
        let seen = Mutex<[[String?]]>([])
        let observation = try db.observe(RecordQuery<Book>()) { result in
            if case .success(let books) = result { seen.withLock { $0.append(books.map { $0.shelf?.name }) } }
        }
        try waitUntil("the first result") { seen.withLock { $0.last } == ["poetry"] }
        var renamed = shelf
        renamed.name = "verse"
        try db.update(renamed)
        try waitUntil("the renamed shelf") { seen.withLock { $0.last } == ["verse"] }
        withExtendedLifetime(observation) {}
    }

    /// A live query filtered in Swift compares what its records show: a row that does not match,
    /// and the related record of one, change nothing it delivers. Each round ends with a change
    /// it does deliver, so every change before it has been seen.
    @Test func aLiveQueryFilteredInSwiftDeliversOnlyChangedResults() throws {
        let shown = try db.insert(Shelf(name: "shown")), hidden = try db.insert(Shelf(name: "hidden"))
        try db.insert(Book(id: "long", title: String(repeating: "x", count: 20), shelf_id: shown.id))
        try db.insert(Book(id: "short", title: "x", shelf_id: hidden.id))
        let seen = Mutex<[[String]]>([])
        let observation = try db.observe(RecordQuery<Book>(#Predicate { $0.title.count > 10 })) { result in
            if case .success(let books) = result { seen.withLock { $0.append(books.map { "\($0.id) \($0.shelf?.name ?? "-")" }) } }
        }
        try waitUntil("the first result") { seen.withLock { $0 } == [["long shown"]] }
        var expected = [["long shown"]]
        for round in 1...5 {
            var renamed = hidden
            renamed.name = "hidden \(round)"
            try db.update(renamed)
            try db.insert(Book(id: "short \(round)", title: "y", shelf_id: hidden.id))
            var visible = shown
            visible.name = "shown \(round)"
            try db.update(visible)
            expected.append(["long shown \(round)"])
            try waitUntil("round \(round)") { seen.withLock { $0.last } == expected.last }
        }
        #expect(seen.withLock { $0 } == expected, "only the renames of the shown shelf change the result")
        withExtendedLifetime(observation) {}
    }
}

/// The first version of a record type, and a later one with a property added.
struct NoteV1: Record {
    var id = ""
    var title: String
    static var tableName: String { "note" }
}

struct NoteV2: DefaultedRecord, Equatable {
    var id = ""
    var title = ""
    var priority = 3
    var tags = ["inbox"]
    var due: Date? = nil
    static var tableName: String { "note" }
}

struct NoteV2Strict: Record {
    var id = ""
    var title: String
    var priority: Int
    static var tableName: String { "note" }
}

/// A property added to a record type reads stored rows with its default.
@Suite struct AddedPropertyTests {
    @Test func oldRowsReadTheDefaultOfADefaultedRecord() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("notes.db")
        do {
            let v1 = try SharedDatabase(path: path, records: [RecordTable(NoteV1.self)])
            try v1.insert(NoteV1(id: "old", title: "written by v1"))
        }
        let v2 = try SharedDatabase(path: path, records: [RecordTable(NoteV2.self)])
        #expect(try v2.fetch(NoteV2.self, id: "old") == NoteV2(id: "old", title: "written by v1", priority: 3, tags: ["inbox"], due: nil))
        try v2.insert(NoteV2(id: "new", title: "v2", priority: 0, tags: []))
        #expect(try v2.fetch(NoteV2.self, id: "new")?.priority == 0, "a stored value wins over the default")
        #expect(try v2.count(RecordQuery<NoteV2>(#Predicate { $0.priority == 3 })) == 1, "SQL reads the default where the row holds NULL, as Swift does")
        #expect(try v2.fetch(RecordQuery<NoteV2>(#Predicate { $0.priority == 3 })).map(\.id) == ["old"])
        #expect(try v2.fetch(RecordQuery<NoteV2>(sortBy: [SortDescriptor(\.priority, order: .reverse)])).map(\.id) == ["old", "new"])
        #expect(try v2.fetch(RecordQuery<NoteV2>(#Predicate { $0.due == nil })).count == 2, "an optional property reads what is stored")
        #expect(
            throws: TandemError.invalidRecord(
                "NoteV2Strict.priority is NULL or missing (row 'old') but the property is not optional; make it optional, give it a default in a DefaultedRecord, or store a value")
        ) {
            try v2.fetch(NoteV2Strict.self, id: "old")
        }
    }
}
