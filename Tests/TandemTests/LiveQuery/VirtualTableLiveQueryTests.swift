import Foundation
import Synchronization
import Testing
@testable import Tandem

/// A live query of a virtual table the user made (FTS5, R*Tree) follows its writes, which land
/// in the virtual table's shadow tables: in this process, in another one, and in memory.
@Suite struct VirtualTableLiveQueryTests {
    static let tables = [
        ("CREATE VIRTUAL TABLE words USING fts5(t)", "INSERT INTO words(t) VALUES ('milk and bread')", "SELECT count(*) FROM words WHERE words MATCH 'milk'"),
        ("CREATE VIRTUAL TABLE boxes USING rtree(id, x0, x1)", "INSERT INTO boxes VALUES (NULL, 0, 1)", "SELECT count(*) FROM boxes WHERE x0 <= 0.5 AND x1 >= 0.5"),
    ]

    func follows(_ db: any DatabaseWriter, create: String, insert: String, query: String, otherProcess: Bool) throws {
        try db.execute(create)
        let counts = Mutex<[Int64]>([])
        let live = try db.observe(query, []) { result in
            if case .success(let rows) = result { counts.withLock { $0.append(rows[0][0].int64Value ?? -1) } }
        }
        defer { live.cancel() }
        try waitUntil("the first result of \(query)") { counts.withLock { $0 } == [0] }
        if otherProcess {
            #expect(try runTandem(["exec", db.path, insert]).status == 0)
        } else {
            try db.execute(insert)
        }
        try waitUntil("\(query) after \(insert)\(otherProcess ? " in another process" : "")") { counts.withLock { $0.last } == 1 }
    }

    @Test(arguments: [false, true]) func aLiveQueryOfAVirtualTableFollowsItsWrites(otherProcess: Bool) throws {
        for (create, insert, query) in Self.tables {
            let dir = try TemporaryDirectory()
            let db = try SharedDatabase(path: dir.path("v.db"), schema: notesSchema)
            try follows(db, create: create, insert: insert, query: query, otherProcess: otherProcess)
            if !otherProcess { try follows(try InMemoryDatabase(schema: notesSchema), create: create, insert: insert, query: query, otherProcess: false) }
        }
    }
}
