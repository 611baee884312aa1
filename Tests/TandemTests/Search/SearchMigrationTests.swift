import Foundation
import Testing
@testable import Tandem

/// A search index through migrations: a searched column renamed, a searched table renamed, a
/// searched column dropped; the index follows the rows, with nothing left of the old names.
@Suite struct SearchMigrationTests {
    static func table(_ name: String, _ columns: [String], search: [String]?) -> TableSchema {
        TableSchema(name: name, columns: columns.map { .text($0) }, search: search.map { SearchIndex(columns: $0) })
    }

    @Test func theIndexFollowsRenamesAndDrops() throws {
        let dir = try TemporaryDirectory()
        let v1 = Schema(tables: [Self.table("notes", ["title", "body"], search: ["title", "body"])])
        let db = try SharedDatabase(path: dir.path("a.db"), schema: v1)
        try db.execute("INSERT INTO notes(id, title, body) VALUES ('a', 'milk', 'tea'), ('b', 'bread', 'milk tea')")
        let rename = Migration("rename-title", uploads: .none, steps: [.renameColumn(table: "notes", from: "title", to: "heading")])
        let v2 = Schema(tables: [Self.table("notes", ["heading", "body"], search: ["heading", "body"])], migrations: [rename])
        _ = try db.migrate(to: v2)
        #expect(try db.search("notes", matching: "heading:milk", syntax: .fts5).compactMap { $0["id"]?.stringValue } == ["a"])
        let move = Migration("rename-table", uploads: .none, steps: [.renameTable(from: "notes", to: "memos")])
        let v3 = Schema(tables: [Self.table("memos", ["heading", "body"], search: ["heading", "body"])], migrations: [rename, move])
        _ = try db.migrate(to: v3)
        #expect(try db.search("memos", matching: "milk").compactMap { $0["id"]?.stringValue }.sorted() == ["a", "b"])
        try db.execute("INSERT INTO memos(id, heading, body) VALUES ('c', 'oat milk', NULL)")
        #expect(try db.search("memos", matching: "oat").compactMap { $0["id"]?.stringValue } == ["c"])
        let drop = Migration("drop-body", uploads: .none, steps: [.dropColumn(table: "memos", column: "body", discardValues: true)])
        let v4 = Schema(tables: [Self.table("memos", ["heading"], search: ["heading"])], migrations: [rename, move, drop])
        _ = try db.migrate(to: v4)
        #expect(try db.search("memos", matching: "tea").isEmpty, "the dropped column's text left the index")
        #expect(try db.search("memos", matching: "milk").compactMap { $0["id"]?.stringValue }.sorted() == ["a", "c"])
        let left = try db.fetchAll("SELECT name FROM sqlite_master WHERE name LIKE '%notes%'").compactMap { $0[0].stringValue }
        #expect(left.isEmpty, "nothing of the old table's name is left: \(left)")
        #expect(try db.checkLayout().isEmpty)
    }
}
