import Foundation
import Testing
@testable import Tandem

/// Two ids that Swift's `String` equality takes for one (`é` precomposed, and `e` with a
/// combining accent) are two rows, as SQLite and the servers keep them: a full download keeps
/// both, and a pending upload of one does not hold back the other's download.
@Suite struct CanonicallyEquivalentIdTests {
    @Test func twoIdsThatSwiftTakesForOneAreTwoRows() throws {
        let dir = try TemporaryDirectory()
        let server = "sqlite:" + dir.path("server.db")
        let (a, b) = (dir.path("a.db"), dir.path("b.db"))
        let (composed, decomposed) = ("\u{e9}", "e\u{301}")
        #expect(composed == decomposed, "the two are one String to Swift")
        do {
            let db = try SharedDatabase(path: a, schema: notesSchema)
            try db.execute("INSERT INTO notes(id, title) VALUES (?, 'composed'), (?, 'decomposed')", [composed, decomposed])
            db.close()
        }
        try SharedDatabase(path: b, schema: notesSchema).close()
        try RollingDrops.sync([a, b], url: server)
        for path in [a, b] {
            let db = try SharedDatabase(path: path, schema: notesSchema)
            #expect(
                try db.fetchAll("SELECT hex(id), title FROM notes ORDER BY hex(id)").map(\.values) == [
                    [.text("65CC81"), .text("decomposed")], [.text("C3A9"), .text("composed")],
                ], "\(path)")
            db.close()
        }
        // b edits one; a's edit of the other downloads to b while b's is pending.
        do {
            let db = try SharedDatabase(path: b, schema: notesSchema)
            try db.execute("UPDATE notes SET title = 'composed, on b' WHERE id = ?", [composed])
            db.close()
            let other = try SharedDatabase(path: a, schema: notesSchema)
            try other.execute("UPDATE notes SET title = 'decomposed, on a' WHERE id = ?", [decomposed])
            other.close()
        }
        try RollingDrops.sync([a], url: server)
        let db = try SharedDatabase(path: b, schema: notesSchema)
        defer { db.close() }
        let applier = ChangeApplier(schema: notesSchema, pending: [RowKey(table: "notes", id: composed): 1])
        try db.write { tx in
            try applier.apply([ServerChange(op: .put, table: "notes", rowID: decomposed, data: #"{"title":"decomposed, on a"}"#)], in: tx)
        }
        #expect(
            try db.fetchAll("SELECT hex(id), title FROM notes ORDER BY hex(id)").map(\.values) == [
                [.text("65CC81"), .text("decomposed, on a")], [.text("C3A9"), .text("composed, on b")],
            ])
    }
}
