import Foundation
import Testing
@testable import Tandem

/// JSON payloads in and out: diff semantics with the exact CRUD entries each produces, rejected
/// payloads that change no byte, and export → import as a no-op.
@Suite struct PayloadTests {
    static let schema = Schema(tables: [
        TableSchema(name: "notes", columns: [.text("title"), .integer("done"), .real("created_at")]),
        TableSchema(name: "items", columns: [.text("label"), .text("note_id")]),
    ])
    let dir: TemporaryDirectory
    let db: SharedDatabase

    init() throws {
        dir = try TemporaryDirectory()
        db = try SharedDatabase(path: dir.path("p.db"), schema: Self.schema)
    }

    func importing(_ json: String, _ extra: [String] = [], table: String = "notes") throws -> (status: Int32, stdout: String, stderr: String) {
        let file = dir.path("payload-\(UUID().uuidString.prefix(6)).json")
        try json.write(toFile: file, atomically: true, encoding: .utf8)
        return try runTandem(["import", db.path, table, file] + extra)
    }

    func entries() throws -> [String] {
        try db.uploadQueue.transactions(limit: 100).flatMap(\.entries).map { $0.jsonText }
    }

    @Test func insertsUpdatesOnlyChangesAndLeavesEqualRowsAlone() throws {
        let first = try importing(#"[{"id":"a","title":"A","done":false,"createdAt":"2024-01-02T03:04:05Z"},{"id":"b","title":"B","done":1}]"#)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == "notes: 2 inserted, 0 updated, 0 deleted, 0 unchanged")
        let second = try importing(#"[{"id":"a","title":"A","done":true,"createdAt":1704164645},{"id":"b","title":"B","done":1},{"id":"c","title":"C"}]"#)
        #expect(second.stdout == "notes: 1 inserted, 1 updated, 0 deleted, 1 unchanged", "\(second.stderr)")
        #expect(
            try entries() == [
                #"{"data":{"created_at":1704164645.0,"done":0,"title":"A"},"id":"a","op":"PUT","type":"notes"}"#,
                #"{"data":{"created_at":null,"done":1,"title":"B"},"id":"b","op":"PUT","type":"notes"}"#,
                #"{"data":{"done":1},"id":"a","op":"PATCH","type":"notes"}"#,
                #"{"data":{"created_at":null,"done":null,"title":"C"},"id":"c","op":"PUT","type":"notes"}"#,
            ])
        let pruned = try importing(#"[{"id":"a","title":"A"}]"#, ["--delete-missing"])
        #expect(pruned.stdout == "notes: 0 inserted, 0 updated, 2 deleted, 1 unchanged")
        #expect(try count(db, "SELECT count(*) FROM notes") == 1)
    }

    @Test func scopedAndNestedImportsTouchOneParentsChildren() throws {
        let nested = try importing(
            #"[{"id":"n1","title":"one","items":[{"id":"i1","label":"x"},{"id":"i2","label":"y"}]},{"id":"n2","title":"two","items":[{"id":"i3","label":"z"}]}]"#,
            ["--nested", "items=items"])
        #expect(nested.status == 0, "\(nested.stderr)")
        #expect(nested.stdout == "items: 3 inserted, 0 updated, 0 deleted, 0 unchanged\nnotes: 2 inserted, 0 updated, 0 deleted, 0 unchanged")
        #expect(try db.fetchAll("SELECT id, note_id FROM items ORDER BY id").map { "\($0[0])>\($0[1])" } == ["i1>n1", "i2>n1", "i3>n1".replacingOccurrences(of: "n1", with: "n2")])
        let scoped = try importing(#"[{"id":"i1","label":"x2","noteId":"n1"}]"#, ["--delete-missing", "--scope", "note_id=n1"], table: "items")
        #expect(scoped.stdout == "items: 0 inserted, 1 updated, 1 deleted, 0 unchanged", "\(scoped.stderr)")
        #expect(try db.fetchAll("SELECT id FROM items ORDER BY id").map { $0[0] } == [.text("i1"), .text("i3")], "n2's item is untouched")
        let moved = try importing(#"[{"id":"n2","title":"two","items":[{"id":"i1","label":"x2"},{"id":"i3","label":"z"}]}]"#, ["--nested", "items=items"])
        #expect(moved.stdout == "items: 0 inserted, 1 updated, 0 deleted, 1 unchanged\nnotes: 0 inserted, 0 updated, 0 deleted, 1 unchanged", "\(moved.stderr)")
        #expect(
            try db.fetchAll("SELECT id, note_id FROM items ORDER BY id").map { "\($0[0])>\($0[1])" } == ["i1>n2", "i3>n2"],
            "an item moved to another parent is updated, not inserted again")
    }

    @Test func aPayloadThatDoesNotFitIsRejectedWholeAndChangesNoByte() throws {
        _ = try importing(#"[{"id":"a","title":"A"}]"#)
        func fingerprint() throws -> [String] {
            try databaseFingerprint(db.path)
        }
        let before = try fingerprint()
        let cases: [(String, [String], String)] = [
            (#"{"id":"a"}"#, [], "must be a JSON array of objects"),
            (#"[{"id":"x","title":"ok"},{"title":"no id"}]"#, [], "element [1] has no id"),
            (#"[{"id":"x"},{"id":"x"}]"#, [], "element [1]: id 'x' appears twice"),
            (#"[{"id":"x","done":"yes"}]"#, [], "element [0], key 'done': \"yes\" does not fit the integer column done"),
            (#"[{"id":"x","title":"t","colour":"red"}]"#, ["--strict"], "element [0], key 'colour': no column of notes matches it"),
            (#"[{"id":"x","created_at":"not a date"}]"#, [], "does not fit the real column created_at"),
        ]
        for (payload, extra, message) in cases {
            let result = try importing(payload, extra)
            #expect(result.status == 1, "\(payload)")
            #expect(result.stderr.contains(message), "\(payload): \(result.stderr)")
        }
        #expect(try fingerprint() == before, "a rejected payload changed the database files")
    }

    @Test func exportThenImportIsANoOp() throws {
        _ = try importing(
            #"[{"id":"a","title":"quote \" and \\ and \u0000","done":0,"created_at":2.0},{"id":"b","title":null,"created_at":-0.0},{"id":"c","title":"2.0","done":9223372036854775807}]"#
        )
        let queued = try db.uploadQueue.pendingCount()
        for keys in ["snake", "camel"] {
            let exported = try runTandem(["export", db.path, "notes", "--keys", keys])
            #expect(exported.status == 0)
            if keys == "camel" { #expect(exported.stdout.contains(#""createdAt":2.0"#)) }
            let again = try importing(exported.stdout)
            #expect(again.stdout == "notes: 0 inserted, 0 updated, 0 deleted, 3 unchanged", "\(keys): \(again.stderr)")
        }
        #expect(try db.uploadQueue.pendingCount() == queued, "the round trip queued nothing")
        let filtered = try runTandem(["export", db.path, "notes", "--where", "done = 0"])
        #expect(
            try JSONValue(parsing: filtered.stdout)
                == .array([.object(["id": .string("a"), "title": .string("quote \" and \\ and \u{0}"), "done": .integer(0), "created_at": .double(2.0)])]))
    }
}

/// The same diff for records.
@Suite struct RecordImportTests {
    @Test func importingRecordsPatchesOnlyWhatChanged() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("r.db"), schema: recordSchema)
        let items = [TodoItem(id: "a", title: "A", count: 1), TodoItem(id: "b", title: "B")]
        #expect(try db.importRecords(items).tables["todo_item"] == ImportResult.Counts(inserted: 2))
        var changed = items
        changed[0].count = 2
        let result = try db.importRecords([changed[0]], options: ImportOptions(deleteMissing: true))
        #expect(result.tables["todo_item"] == ImportResult.Counts(updated: 1, deleted: 1))
        #expect(try db.uploadQueue.transactions(limit: 10).flatMap(\.entries).last(where: { $0.op == .patch })?.data == ["count": .integer(2)])
        // An infinite real is refused, as an insert refuses it, not written as NULL.
        #expect(
            throws: TandemError.invalidValue(
                ValueRefusal(
                    table: "todo_item", column: "score", rowID: "a",
                    message: "TodoItem.score (row 'a'): an infinite real cannot be stored (JSON has no representation for it)"))
        ) {
            try db.importRecords([TodoItem(id: "a", title: "A", score: .infinity)])
        }
        #expect(try db.fetch(TodoItem.self, id: "a")?.score == 0)
    }
}
