import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// `tandem exec` reports the rows its statements changed in the user's tables: a row an
/// `INSERT OR REPLACE` replaced once, the rows of a savepoint rolled back not at all.
@Suite struct RowCountTests {
    static let schema = Schema(tables: [
        TableSchema(name: "notes", columns: [.text("title")]),
        TableSchema(name: "drafts", columns: [.text("title")], localOnly: true),
        TableSchema(name: "events", columns: [.text("title")], insertOnly: true),
    ])

    /// Generated scripts of inserts, replaces, updates (some changing nothing), deletes and
    /// nested savepoints released or rolled back, on views of every kind and a plain table:
    /// the count is what a model of the statements says.
    @Test func generatedScriptsAreCountedAsTheyChangedRows() throws {
        let dir = try TemporaryDirectory()
        var random = SeededRandom(seed: 0xc0de)
        for round in 0..<40 {
            let db = try SharedDatabase(path: dir.path("r\(round).db"), schema: Self.schema)
            try db.execute("CREATE TABLE plain(id TEXT PRIMARY KEY, title)")
            var live: [String: Set<String>] = ["notes": [], "drafts": [], "plain": []]
            var statements: [String] = []
            var total = 0
            // Open savepoints: name, and the model as it was when each began.
            var savepoints: [(name: String, total: Int, live: [String: Set<String>])] = []
            var next = 0
            for _ in 0..<(8 + Int(random.next() % 12)) {
                let table = ["notes", "drafts", "plain", "events"][Int(random.next() % 4)]
                let ids = Array(live[table] ?? []).sorted()
                switch random.next() % 8 {
                case 0, 1:
                    let count = 1 + Int(random.next() % 3)
                    let new = (0..<count).map { _ in
                        next += 1; return "n\(next)"
                    }
                    statements.append("INSERT INTO \(table)(id, title) VALUES " + new.map { "('\($0)', 'x')" }.joined(separator: ", "))
                    live[table]?.formUnion(new)
                    total += count
                case 2 where !ids.isEmpty && table != "events":
                    // Replaces one existing row and inserts one new.
                    next += 1
                    statements.append("INSERT OR REPLACE INTO \(table)(id, title) VALUES ('\(ids[0])', 'replaced \(next)'), ('n\(next)', 'y')")
                    live[table]?.insert("n\(next)")
                    total += 2
                case 3 where !ids.isEmpty && table != "events":
                    next += 1
                    statements.append("UPDATE \(table) SET title = 'changed \(next)' WHERE id = '\(ids[ids.count / 2])'")
                    total += 1
                case 4 where table != "events" && table != "plain":
                    statements.append("UPDATE \(table) SET title = title")  // changes no row
                case 5 where !ids.isEmpty && table != "events":
                    statements.append("DELETE FROM \(table) WHERE id = '\(ids.last!)'")
                    live[table]?.remove(ids.last!)
                    total += 1
                case 6:
                    let name = "s\(savepoints.count)"
                    statements.append("SAVEPOINT \(name)")
                    savepoints.append((name, total, live))
                case 7 where !savepoints.isEmpty:
                    let index = Int(random.next() % UInt64(savepoints.count))
                    let savepoint = savepoints[index]
                    if random.next() % 2 == 0 {
                        statements.append("ROLLBACK TO \(savepoint.name)")
                        total = savepoint.total
                        live = savepoint.live
                        savepoints.removeSubrange((index + 1)...)
                    } else {
                        statements.append("RELEASE \(savepoint.name)")
                        savepoints.removeSubrange(index...)
                    }
                default:
                    statements.append("SELECT count(*) FROM notes")
                }
            }
            let script = statements.joined(separator: ";\n")
            let result = try db.write { try $0.run(script) }
            #expect(result.rowsChanged == total, "round \(round): \(result.rowsChanged) counted, \(total) changed:\n\(script)")
            for table in ["notes", "drafts", "plain"] {
                let stored = Set(try db.fetchAll("SELECT id FROM \(table)").compactMap { $0[0].stringValue })
                #expect(stored == live[table], "round \(round): \(table) holds what the model says")
            }
        }
    }

    @Test func execReportsAReplacedRowOnceAndARolledBackSavepointNotAtAll() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        _ = try SharedDatabase(path: path, schema: Self.schema)
        #expect(try runTandem(["exec", path, "INSERT INTO notes(id, title) VALUES ('a', 'first')"]).stdout == "1 row changed")
        #expect(try runTandem(["exec", path, "INSERT OR REPLACE INTO notes(id, title) VALUES ('a', 'second')"]).stdout == "1 row changed")
        #expect(try runTandem(["exec", path, "SAVEPOINT s; INSERT INTO notes(id, title) VALUES ('b', 'gone'); ROLLBACK TO s; RELEASE s"]).stdout == "0 rows changed")
        #expect(try runTandem(["exec", path, "INSERT INTO events(title) VALUES ('queued'), ('queued')"]).stdout == "2 rows changed")
        #expect(try runTandem(["exec", path, "UPDATE notes SET title = title"]).stdout == "0 rows changed")
    }
}
