import Foundation
import Testing
@testable import Tandem

/// `tandem changes` names exactly the user's tables each commit changed, for every kind of write
/// (insert, update, delete, replace, a transaction over several tables, an import, a write to a
/// local-only or an insert-only table, a download), from any process, and never one of
/// Tandem's own tables.
@Suite struct ChangesCommandTests {
    static let schema = Schema(
        tables: queueSchema.tables + [TableSchema(name: "todos", columns: [.text("what")])])
    static let userTables: Set<String> = ["notes", "drafts", "events", "todos"]

    /// The tables a `--json` line names; nil for an unknown change.
    static func tables(_ line: String) throws -> [String]? {
        guard case .object(let object) = try JSONValue(parsing: line), object["unknown"] != .bool(true),
            case .array(let names)? = object["tables"]
        else { return nil }
        return names.map { if case .string(let name) = $0 { name } else { "?" } }
    }

    @Test func eachCommitNamesExactlyTheUsersTablesItChanged() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: Self.schema)
        let server = dir.path("server.db")
        let other = try SharedDatabase(path: dir.path("b.db"), schema: Self.schema)
        let changes = try Spawned(["changes", db.path, "--json"])
        defer { changes.signal(SIGTERM) }
        try changes.waitForLine("ready") { $0.contains("ready") }
        let payload = dir.path("notes.json")
        try #"[{"id":"n1","title":"imported"},{"id":"n9","title":"new"}]"#.write(toFile: payload, atomically: true, encoding: .utf8)
        let events = dir.path("events.ndjson")
        try (0..<5).map { #"{"id":"e\#($0)","kind":"k"}"# }.joined(separator: "\n").write(toFile: events, atomically: true, encoding: .utf8)
        // Each write in its own process, and the line it prints, in order.
        let steps: [([String], [String])] = [
            (["exec", db.path, "INSERT INTO notes(id, title) VALUES ('n1', 'a')"], ["notes"]),
            (["exec", db.path, "INSERT INTO events(id, kind) VALUES ('e', 'x')"], ["events"]),
            (["exec", db.path, "INSERT INTO drafts(id, body) VALUES ('d1', 'x')"], ["drafts"]),
            (["exec", db.path, "UPDATE notes SET title = 'b'"], ["notes"]),
            (["exec", db.path, "UPDATE notes SET title = title"], []),
            (
                ["exec", db.path, "INSERT INTO todos(id, what) VALUES ('t1', 'x'); INSERT INTO events(kind) VALUES ('y'); UPDATE drafts SET body = 'y'"],
                ["drafts", "events", "todos"]
            ),
            (["exec", db.path, "INSERT OR REPLACE INTO todos(id, what) VALUES ('t1', 'z')"], ["todos"]),
            (["exec", db.path, "DELETE FROM todos"], ["todos"]),
            (["exec", db.path, "DELETE FROM drafts"], ["drafts"]),
            (["import", db.path, "notes", payload], ["notes"]),
            (["import", db.path, "events", events, "--ndjson"], ["events"]),
            (["exec", db.path, "INSERT INTO todos(id, what) VALUES ('t2', 'x')"], ["todos"]),
        ]
        var expected: [[String]] = []
        for (arguments, tables) in steps {
            let result = try runTandem(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            if tables.isEmpty { continue }
            expected.append(tables)
            try waitUntil("the line of `\(arguments.joined(separator: " "))`") { changes.output.count > expected.count }
        }
        #expect(try changes.output.dropFirst().map(Self.tables) == expected, "\(changes.output)")
        // A download from another client: its table (and this client's own rows coming back).
        try other.execute("INSERT INTO todos(id, what) VALUES ('from-b', 'x')")
        #expect(try tandem(["sync", other.path, "--backend", "sqlite:" + server]).status == 0)
        #expect(try tandem(["sync", db.path, "--backend", "sqlite:" + server]).status == 0)
        try waitUntil("the download's line") { try changes.output.dropFirst(expected.count + 1).contains { try Self.tables($0)?.contains("todos") == true } }
        let count = changes.output.count
        try db.execute("INSERT INTO notes(id, title) VALUES ('last', 'x')")  // from this process
        try waitUntil("the last line") { changes.output.count > count }
        let after = try changes.output.dropFirst(expected.count + 1).map(Self.tables)
        #expect(after.allSatisfy { $0.map { !$0.isEmpty && Set($0).isSubset(of: Self.userTables) } == true }, "\(after)")
        #expect(after.last == ["notes"])
    }

    /// Writers in several processes at once: every table written shows in some line, and no line
    /// names anything but the user's tables.
    @Test func concurrentWritersShowEveryTableAndNoInternalOne() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: Self.schema)
        let changes = try Spawned(["changes", db.path, "--json"])
        defer { changes.signal(SIGTERM) }
        try changes.waitForLine("ready") { $0.contains("ready") }
        let writes = [
            "notes": "INSERT INTO notes(title) VALUES ('x')", "events": "INSERT INTO events(kind) VALUES ('x')",
            "drafts": "INSERT INTO drafts(body) VALUES ('x')", "todos": "INSERT INTO todos(what) VALUES ('x')",
        ]
        let writers = try writes.values.map { sql in
            try Spawned(executable: "/bin/sh", ["-c", #"for i in 1 2 3 4 5 6 7 8; do "$0" exec "$1" "$2" >/dev/null || exit 1; done"#, tandemBinary, db.path, sql])
        }
        for writer in writers { #expect(try writer.wait() == 0) }
        try db.execute("INSERT INTO notes(id, title) VALUES ('sentinel', 'x')")
        let lines = try { () throws -> [[String]?] in
            try waitUntil("the sentinel") { changes.output.count > 1 }
            try waitUntil("every table to show") {
                let seen = Set(try changes.output.dropFirst().compactMap(Self.tables).joined())
                return seen == Self.userTables
            }
            return try changes.output.dropFirst().map(Self.tables)
        }()
        for line in lines.compactMap({ $0 }) {
            #expect(!line.isEmpty && Set(line).isSubset(of: Self.userTables), "\(line)")
        }
    }
}
