import Foundation
import Synchronization
import Testing
@testable import Tandem

@Suite struct InsertOnlySwitchTests {
    /// synced → insert-only → synced: deletes and updates made elsewhere meanwhile arrive.
    @Test func switchingThroughInsertOnlyConverges() throws {
        let dir = try TemporaryDirectory()
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        let items = TableSchema(name: "items", columns: [.text("t")])
        var insertOnly = items
        insertOnly.insertOnly = true
        let a = try SharedDatabase(path: dir.path("a.db"), schema: Schema(tables: [items]))
        try a.execute("INSERT INTO items(id, t) VALUES ('x', '1'), ('y', '1')")
        _ = try a.sync.once(with: backend)
        do { _ = try SharedDatabase(path: dir.path("b.db"), schema: Schema(tables: [items])).sync.once(with: backend) }
        do {
            let b = try SharedDatabase(path: dir.path("b.db"), schema: Schema(tables: [insertOnly]))
            #expect(try count(b, "SELECT count(*) FROM items") == 0, "an insert-only table keeps no local rows")
        }
        try a.execute("DELETE FROM items WHERE id = 'y'; UPDATE items SET t = '2' WHERE id = 'x'")
        _ = try a.sync.once(with: backend)
        do { _ = try SharedDatabase(path: dir.path("b.db")).sync.once(with: backend) }
        let b = try SharedDatabase(path: dir.path("b.db"), schema: Schema(tables: [items]))
        let query = "SELECT id, t FROM items ORDER BY id"
        #expect(try b.fetchAll(query) == a.fetchAll(query))
    }
}
