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

extension CanonicallyEquivalentIdTests {
    /// The same pair written by every write path (SQL through the view, the `sqlite3` shell, an
    /// import, records one at a time, records in bulk), in tables of their own: every host keeps both rows of
    /// each pair through an upload and a new host's full download.
    @Test(arguments: ["embedded", "PostgreSQL"])
    func everyWritePathKeepsThePairApartThroughSync(backend: String) throws {
        if backend == "PostgreSQL" && TestPostgres.url == nil { return }
        let paths = ["sql", "shell", "import"]
        let schema = Schema(
            tables: paths.map { TableSchema(name: $0, columns: [.text("title")]) } + [
                TableSchema(name: "shelf", columns: [.text("name"), .text("room_id")]), TableSchema(name: "room", columns: [.text("name")]),
            ])
        let dir = try TemporaryDirectory()
        let server = backend == "PostgreSQL" ? try TestPostgres.database(schema: schema) : "sqlite:" + dir.path("server.db")
        let (a, b) = (dir.path("a.db"), dir.path("b.db"))
        let (composed, decomposed) = ("\u{e9}", "e\u{301}")
        do {
            let db = try SharedDatabase(path: a, schema: schema)
            try db.execute("INSERT INTO sql(id, title) VALUES (?, 'one'), (?, 'two')", [composed, decomposed])
            try sqlite(a, "INSERT INTO shell(id, title) VALUES (char(233), 'one'), ('e' || char(769), 'two')")
            _ = try db.importJSON(from: .data(Data(#"[{"id":"\#(composed)","title":"one"},{"id":"\#(decomposed)","title":"two"}]"#.utf8)), into: "import")
            _ = try db.insert(Shelf(id: composed, name: "one"))
            _ = try db.insert(Shelf(id: decomposed, name: "two"))
            _ = try db.insert(contentsOf: [Room(id: composed, name: "one"), Room(id: decomposed, name: "two")])
            db.close()
        }
        try SharedDatabase(path: b, schema: schema).close()
        try RollingDrops.sync([a, b, a], url: server)
        for path in [a, b] {
            let db = try SharedDatabase(path: path, schema: schema)
            for table in paths + ["shelf", "room"] {
                #expect(try db.fetchAll("SELECT hex(id) FROM \(table) ORDER BY hex(id)").map { $0[0] } == [.text("65CC81"), .text("C3A9")], "\(backend), \(path): \(table)")
            }
            db.close()
        }
    }
}
