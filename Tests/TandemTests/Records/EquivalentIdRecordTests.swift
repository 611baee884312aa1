import Foundation
import Testing
@testable import Tandem

/// Ids SQLite keeps apart and Swift's `String` equality takes for one, in nested imports,
/// related records and live queries sorted in Swift.
@Suite struct EquivalentIdRecordTests {
    static let (composed, decomposed) = ("\u{e9}", "e\u{301}")

    @Test func aNestedImportTellsTheTwoApart() throws {
        let schema = Schema(tables: [
            TableSchema(name: "lists", columns: [.text("name")]), TableSchema(name: "items", columns: [.text("what"), .text("list_id")]),
        ])
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("n.db"), schema: schema)
        defer { db.close() }
        try db.execute("INSERT INTO lists(id, name) VALUES ('n1', 'list')")
        try db.execute("INSERT INTO items(id, what, list_id) VALUES (?, 'stored', 'n1')", [Self.decomposed])
        var options = ImportOptions()
        options.nested = ["items": "items"]
        options.deleteMissing = true
        let payload = #"[{"id":"n1","name":"list","items":[{"id":"\#(Self.composed)","what":"imported"}]}]"#
        _ = try db.importJSON(from: .data(Data(payload.utf8)), into: "lists", options: options)
        #expect(try db.fetchAll("SELECT hex(id), what FROM items").map(\.values) == [[.text("C3A9"), .text("imported")]])
        let both = #"[{"id":"n1","name":"list","items":[{"id":"\#(Self.composed)","what":"one"},{"id":"\#(Self.decomposed)","what":"two"}]}]"#
        _ = try db.importJSON(from: .data(Data(both.utf8)), into: "lists", options: options)
        #expect(try db.fetchAll("SELECT hex(id), what FROM items ORDER BY hex(id)").map(\.values) == [[.text("65CC81"), .text("two")], [.text("C3A9"), .text("one")]])
    }
}

extension EquivalentIdRecordTests {
    static func shelves() throws -> Schema { try Schema(records: [RecordTable(Book.self), RecordTable(Shelf.self), RecordTable(Room.self)]) }

    func shelvesAndBooks(_ db: SharedDatabase) throws {
        try db.insert(Shelf(id: Self.composed, name: "composed shelf"))
        try db.insert(Shelf(id: Self.decomposed, name: "decomposed shelf"))
        try db.insert(Book(id: Self.composed, title: "b1", shelf_id: Self.composed))
        try db.insert(Book(id: Self.decomposed, title: "b2", shelf_id: Self.decomposed))
    }

    @Test func relatedRecordsAndSortedLiveQueriesTellTheTwoApart() async throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("r.db"), schema: try Self.shelves())
        defer { db.close() }
        try shelvesAndBooks(db)
        let books = try db.fetch(RecordQuery<Book>(sortBy: [SortDescriptor(\.title)]))
        #expect(books.map { $0.shelf?.name } == ["composed shelf", "decomposed shelf"])
        // Sorted on a relationship: in Swift, after the query.
        var stream = db.watch(RecordQuery<Book>(sortBy: [SortDescriptor(\.shelf?.name, order: .reverse)])).makeAsyncIterator()
        let watched = try await stream.next()
        #expect(watched?.map(\.title) == ["b2", "b1"])
        #expect(watched?.map { Array($0.id.utf8) } == [Array(Self.decomposed.utf8), Array(Self.composed.utf8)])
    }
}
