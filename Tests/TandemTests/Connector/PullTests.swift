import Foundation
import Testing
@testable import Tandem

/// Payload pulls: a table's rows as an API lists them, applied as a download within a scope,
/// pending edits kept, nothing queued; from Swift and from a connector program.
@Suite struct PullTests {
    static let schema = Schema(tables: [
        TableSchema(name: "notes", columns: [.text("title"), .text("folder"), .integer("n"), .real("r")])
    ])

    @Test func aPullInsertsUpdatesAndDeletesWithinItsScopeAsADownload() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: Self.schema)
        defer { db.close() }
        try db.execute(
            """
            INSERT INTO notes(id, title, folder, n, r) VALUES ('a', 'old', 'F1', 1, 1.5), ('b', 'same', 'F1', 2, 2.0),
                ('c', 'other folder', 'F2', 3, 3.0), ('p', 'pending', 'F1', 4, 4.0), ('e', 'gone', 'F1', 5, 5.0)
            """)
        try db.uploadQueue.complete(try db.uploadQueue.transactions(limit: 10), epoch: try db.sync.status().epoch)
        try db.execute("UPDATE notes SET title = 'edited here' WHERE id = 'p'")
        let queued = try db.uploadQueue.pendingCount()
        let payload = """
            {"id":"a","title":"new\\u0000","folder":"F1","n":-9223372036854775808,"r":-0.0}
            {"id":"b","title":"same","folder":"F1","n":2,"r":2.0}
            {"id":"d","title":"{\\"json\\":1}","folder":"F1","n":9223372036854775807,"r":0.30000000000000004,"extra":"ignored"}
            {"id":"p","title":"from the API","folder":"F1","n":4,"r":4.0}
            """
        let result = try db.sync.applyPull(Data(payload.utf8), into: "notes", scope: PullScope(column: "folder", value: "F1"), format: .ndjson)
        var expected = PullResult()
        (expected.inserted, expected.updated, expected.unchanged, expected.deleted, expected.keptPending) = (1, 1, 1, 1, 1)
        #expect(result == expected, "\(result)")
        #expect(try db.uploadQueue.pendingCount() == queued, "a pull queues nothing")
        let rows = try db.fetchAll("SELECT id, title, n, r FROM notes ORDER BY id")
        #expect(rows.map { $0[0] } == [.text("a"), .text("b"), .text("c"), .text("d"), .text("p")])
        #expect(rows[0][1] == .text("new\u{0}") && rows[0][2] == .integer(.min) && rows[0][3].doubleValue?.bitPattern == (-0.0).bitPattern)
        #expect(rows[3][1] == .text(#"{"json":1}"#) && rows[3][2] == .integer(.max) && rows[3][3] == .real(0.30000000000000004))
        #expect(rows[4][1] == .text("edited here"), "the pending edit is kept")
        #expect(rows[2][1] == .text("other folder"), "outside the scope, untouched")
    }

    /// A payload with a wrong type, an element outside the scope, a repeated id or no id is
    /// refused naming the element, and changes nothing.
    @Test(arguments: [
        (#"[{"id":"a","folder":"F1","n":"five"}]"#, "element [0] (id 'a'): column n of notes takes an integer, not \"five\""),
        (#"[{"id":"a","folder":"F1","r":true}]"#, "column r of notes takes a number, not true"),
        (#"[{"id":"a","folder":"F2"}]"#, "outside the pull's scope folder = 'F1'"),
        (#"[{"id":"a","folder":"F1"},{"id":"a","folder":"F1"}]"#, "id 'a' appears twice"),
        (#"[{"title":"x","folder":"F1"}]"#, "has no text id"),
        (#"{"id":"a"}"#, "is not a JSON array"),
        ("[{", "is not JSON"),
    ])
    func aBadPayloadChangesNothing(payload: String, message: String) throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: Self.schema)
        defer { db.close() }
        try db.execute("INSERT INTO notes(id, title, folder) VALUES ('keep', 'x', 'F1')")
        #expect {
            try db.sync.applyPull(Data(payload.utf8), into: "notes", scope: PullScope(column: "folder", value: "F1"))
        } throws: { error in
            "\(error)".contains(message)
        }
        #expect(try db.fetchAll("SELECT id FROM notes").map { $0[0] } == [.text("keep")])
    }

    /// `tandem app` runs a connector program's pulls at its interval: a row the list gains
    /// arrives, one it loses leaves.
    @Test func theAppPullsAtItsInterval() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        try SharedDatabase(path: path, schema: Self.schema).close()
        let list = dir.path("list.ndjson")
        try Data(#"{"id":"x","title":"first","folder":"F1"}"#.utf8).write(to: URL(fileURLWithPath: list))
        let script = dir.path("connector.sh")
        let program = """
            #!/bin/sh
            case "$1" in
              upload) echo '{"version":1,"batch":"applied"}' ;;
              fetch) echo '{"version":1,"changes":[],"cursor":""}' ;;
              pulls) echo '{"version":1,"pulls":[{"table":"notes","format":"ndjson"}]}' ;;
              pull) cat '\(list)' ;;
            esac
            """
        let connector = try ConnectorTests.program(program, at: script)
        let app = try Spawned(["app", path, "--connector", connector, "--pull-every", "200ms", "--json"])
        defer { app.signal(SIGKILL) }
        let db = try SharedDatabase(path: path)
        defer { db.close() }
        try waitUntil(timeout: 30, "the pulled row") { try db.fetchAll("SELECT id FROM notes").map { $0[0] } == [.text("x")] }
        try Data(#"{"id":"y","title":"second","folder":"F1"}"#.utf8).write(to: URL(fileURLWithPath: list))
        try waitUntil(timeout: 30, "the list's change") { try db.fetchAll("SELECT id FROM notes").map { $0[0] } == [.text("y")] }
        #expect(try db.uploadQueue.pendingCount() == 0)
        app.signal(SIGTERM)
        #expect(try app.wait(timeout: 30) == 0)
    }

    /// `tandem sync --pull` runs the pulls a connector program declares.
    @Test func aConnectorProgramsPullsRunWithSyncPull() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        try SharedDatabase(path: path, schema: Self.schema).close()
        let script = dir.path("connector.sh")
        let program = #"""
            #!/bin/sh
            case "$1" in
              upload) echo '{"version":1,"batch":"applied"}' ;;
              fetch) echo '{"version":1,"changes":[],"cursor":""}' ;;
              pulls) echo '{"version":1,"pulls":[{"table":"notes","scope":{"column":"folder","value":"F1"},"format":"ndjson"}]}' ;;
              pull) printf '%s\n' '{"id":"x","title":"from the list","folder":"F1","n":7}' '{"id":"y","title":"second","folder":"F1"}' ;;
              *) exit 64 ;;
            esac
            """#
        let connector = try ConnectorTests.program(program, at: script)
        let sync = try runTandem(["sync", path, "--connector", connector, "--pull"])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sync.stdout.contains("pulled notes: 2 inserted, 0 updated, 0 deleted, 0 unchanged, 0 kept (pending upload)"), "\(sync.stdout)")
        let db = try SharedDatabase(path: path)
        defer { db.close() }
        #expect(try db.fetchAll("SELECT id, n FROM notes ORDER BY id").map { [$0[0], $0[1]] } == [[.text("x"), .integer(7)], [.text("y"), .null]])
        #expect(try db.uploadQueue.pendingCount() == 0)
        let refused = try runTandem(["sync", path, "--backend", "sqlite:" + dir.path("s.db"), "--pull"])
        #expect(refused.status != 0)
    }
}
