import Foundation
import Testing
@testable import Tandem

/// Importing into an insert-only table (which keeps no local rows) queues a PUT per element;
/// what needs local rows (--delete-missing, --scope) is refused saying why; an undeclared table
/// is named as such.
@Suite struct ImportInsertOnlyTests {
    static let schema = Schema(tables: [
        TableSchema(name: "loc", columns: [.text("title")], localOnly: true),
        TableSchema(name: "ins", columns: [.text("kind"), .real("at"), .text("note_id")], insertOnly: true),
        TableSchema(name: "notes", columns: [.text("title")]),
    ])

    @Test func everyElementIsQueuedAsAPut() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("i.db"), schema: Self.schema)
        let payload = dir.path("events.json")
        try Data(#"[{"id":"e1","kind":"opened","at":1.5},{"id":"e2","kind":"closed"}]"#.utf8).write(to: URL(fileURLWithPath: payload))
        let first = try runTandem(["import", db.path, "ins", payload])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == "ins: 2 inserted, 0 updated, 0 deleted, 0 unchanged")
        #expect(
            try db.uploadQueue.transactions(limit: 10).flatMap(\.entries).map(\.jsonText) == [
                #"{"data":{"at":1.5,"kind":"opened","note_id":null},"id":"e1","op":"PUT","type":"ins"}"#,
                #"{"data":{"at":null,"kind":"closed","note_id":null},"id":"e2","op":"PUT","type":"ins"}"#,
            ])
        let notes = dir.path("notes.json")
        try Data(#"[{"id":"n1","title":"t","events":[{"id":"e3","kind":"k"}]}]"#.utf8).write(to: URL(fileURLWithPath: notes))
        let nested = try runTandem(["import", db.path, "notes", notes, "--nested", "events=ins"])
        #expect(
            nested.status == 0 && nested.stdout == "ins: 1 inserted, 0 updated, 0 deleted, 0 unchanged\nnotes: 1 inserted, 0 updated, 0 deleted, 0 unchanged", "\(nested.stderr)")
        #expect(try db.uploadQueue.pendingCount() == 4)
    }

    @Test func whatNeedsLocalRowsIsRefusedSayingWhy() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("i.db"), schema: Self.schema)
        let payload = dir.path("events.json")
        try Data(#"[{"id":"e1","kind":"opened"}]"#.utf8).write(to: URL(fileURLWithPath: payload))
        let before = try databaseFingerprint(db.path)
        for (arguments, message) in [
            (["ins", payload, "--delete-missing"], "ins is insert-only: it keeps no local rows (they go to the backend), so no row can be found missing from the payload"),
            (["ins", payload, "--scope", "kind=opened"], "ins is insert-only: it keeps no local rows (they go to the backend), so there are no rows to compare within a scope"),
            (["notes", payload, "--nested", "events=ins", "--delete-missing"], "ins is insert-only"),
            (["nope", payload], "'nope' is not a declared table (declared: loc, ins, notes)"),
        ] {
            let result = try runTandem(["import", db.path] + arguments)
            #expect(result.status == 1 && result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("not a declared table that rows can be imported into"))
        }
        #expect(try databaseFingerprint(db.path) == before, "a refused import changed the files")
    }
}
