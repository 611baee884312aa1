import Foundation
import Synchronization
import Testing
@testable import Tandem

@Suite struct UnreportedChangeTests {
    /// Changes the update hook does not see (a WITHOUT ROWID table, a truncating DELETE) still
    /// wake live queries in other processes at once, as "unknown tables".
    @Test func changesTheUpdateHookMissesStillWakeOtherProcesses() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("CREATE TABLE plain_kv(k TEXT PRIMARY KEY, v) WITHOUT ROWID")
        let watcher = try Spawned(["watch", db.path, "SELECT count(*) AS n FROM plain_kv", "--json"])
        try watcher.waitForLine("the initial result") { $0 == #"[{"n":0}]"# }
        try db.execute("INSERT INTO plain_kv(k, v) VALUES ('a', 1)")
        // Well within the 1 s backstop poll: the commit itself woke the watcher.
        try watcher.waitForLine(timeout: 0.5, "the new count") { $0 == #"[{"n":1}]"# }
        watcher.signal(SIGTERM)
    }

    /// A transaction that writes a WITHOUT ROWID table and a view-backed table stamps both.
    @Test func aMixedTransactionStampsBothTables() async throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("CREATE TABLE plain_kv(k TEXT PRIMARY KEY, v) WITHOUT ROWID")
        var changes = try db.changes().makeAsyncIterator()
        try db.execute("INSERT INTO plain_kv(k, v) VALUES ('a', 1); INSERT INTO notes(title) VALUES ('n')")
        let change = try #require(try await changes.next(within: 10, "the mixed transaction's change"))
        #expect(change.tables == ["plain_kv", "notes", "ps_crud"])
    }
}
