import Foundation
import Testing
@testable import Tandem

/// `tandem init` over an SQLite database another program made refuses, changing no file,
/// unless `--adopt`; adopted, the program's objects and rows stay as they were, and init says
/// what it did.
@Suite struct AdoptionTests {
    static let objects: [(kind: String, sql: String)] = [
        ("table users", "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users(name) VALUES ('ann');"),
        ("view grown", "CREATE VIEW grown AS SELECT 1 AS one;"),
        ("table people, index by_name", "CREATE TABLE people(name TEXT); CREATE INDEX by_name ON people(name);"),
        ("table log, trigger stamp", "CREATE TABLE log(at TEXT); CREATE TRIGGER stamp AFTER INSERT ON log BEGIN SELECT 1; END;"),
    ]

    @Test func anotherProgramsDatabaseIsRefusedUnlessAdopted() throws {
        for (kind, sql) in Self.objects {
            // Rollback modes other than delete last only as long as a connection: the file says delete.
            for mode in ["delete", "truncate", "persist", "wal"] {
                let dir = try TemporaryDirectory()
                let path = dir.path("app.db")
                try sqlite(path, "PRAGMA journal_mode=\(mode); \(sql)")
                let schema = try dir.schemaFile()
                let before = try listing(dir.url.path)
                let refused = try tandem(["init", path, "--schema", schema])
                #expect(refused.status == 1, "\(kind), \(mode): \(refused.stdout)")
                #expect(
                    refused.stderr.contains("is an SQLite database that Tandem did not make (\(kind)") && refused.stderr.contains("run again with --adopt"),
                    "\(kind), \(mode): \(refused.stderr)")
                #expect(try listing(dir.url.path) == before, "\(kind), \(mode): a refused init changed the files")
                // Adopting under a schema whose table collides with the program's is refused too.
                if kind == "table users" {
                    let colliding = try dir.schemaFile(Schema(tables: [TableSchema(name: "users", columns: [.text("name")])]), name: "users.json")
                    let collided = try tandem(["init", path, "--schema", colliding, "--adopt"])
                    #expect(collided.status == 1 && collided.stderr.contains("table 'users' collides"), "\(mode): \(collided.stderr)")
                    #expect(try listing(dir.url.path).filter { $0.key != "users.json" } == before, "\(mode): a failed adoption changed the files")
                }
                let adopted = try tandem(["init", path, "--schema", schema, "--adopt"])
                #expect(adopted.status == 0, "\(kind), \(mode): \(adopted.stderr)")
                #expect(
                    adopted.stdout.contains(
                        "adopted \(path), a database Tandem did not make: journal mode \(mode == "wal" ? "wal as it was" : "delete switched to wal"); its own \(kind) kept as they were, not synced"
                    ),
                    "\(kind), \(mode): \(adopted.stdout)")
                if kind == "table users" { #expect(try sqlite(path, "SELECT name FROM users") == ["ann"]) }
                #expect(try tandem(["init", path, "--schema", schema]).status == 0, "a Tandem database needs no --adopt")
            }
        }
    }
}
