import Foundation
import Testing
@testable import Tandem

/// A writer never commits with the transaction counter at or behind the upload queue, whatever
/// another program did to it; `tandem check` sees a queue whose transaction ids go back, and
/// `tandem init` repairs it.
@Suite struct TransactionCounterTests {
    private func shell(_ path: String, _ sql: String) throws {
        let sqlite = try Spawned(executable: "/usr/bin/sqlite3", [path, sql])
        #expect(try sqlite.wait() == 0, "sqlite3: \(sqlite.stderr)")
    }

    private func transactions(_ db: SharedDatabase) throws -> [[String]] {
        try db.read { try UploadQueueRows.head(transactions: 1000, in: $0) }.map { $0.entries.map(\.rowID) }
    }

    /// The counter set back (to 0, to the newest queued id, below it) by the sqlite3 shell, or
    /// left at the newest id by the shell's own writes through the views: the next writers'
    /// transactions stay their own, each in another process.
    @Test(arguments: [
        "UPDATE ps_state SET value = 0 WHERE key = 'next_tx'", "UPDATE ps_state SET value = (SELECT max(tx_id) FROM ps_crud) WHERE key = 'next_tx'",
        "UPDATE ps_state SET value = (SELECT max(tx_id) FROM ps_crud) - 1 WHERE key = 'next_tx'", "INSERT INTO notes(id, title) VALUES ('shell', 'from the shell')",
    ])
    func laterTransactionsNeverJoinQueuedOnes(tampering: String) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try SharedDatabase(path: path, schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('a1', 'x')")
        try db.execute("INSERT INTO notes(id, title) VALUES ('a2', 'x')")
        try shell(path, tampering)
        for id in ["b1", "b2"] {
            #expect(try runTandem(["exec", path, "INSERT INTO notes(id, title) VALUES (?, 'y')", id]).status == 0)
        }
        try db.execute("INSERT INTO notes(id, title) VALUES ('c1', 'z')")
        let shellRows = tampering.hasPrefix("INSERT") ? [["shell"]] : []
        #expect(try transactions(db) == [["a1"], ["a2"]] + shellRows + [["b1"], ["b2"], ["c1"]])
        let findings = try SharedDatabase.check(path: path)
        #expect(findings.isEmpty, "\(findings)")
    }

    /// Ids that go back in the queue (written before writers sealed it) are found and repaired:
    /// the entries from there on get ids past those before them, in their grouping and order.
    @Test func checkSeesIDsGoingBackAndInitRepairsThem() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        do {
            let db = try SharedDatabase(path: path, schema: notesSchema)
            for id in ["a", "b", "c", "d"] { try db.execute("INSERT INTO notes(id, title) VALUES (?, 'x')", [id]) }
        }
        try shell(path, "UPDATE ps_crud SET tx_id = tx_id - 10 WHERE id >= 3")
        let check = try runTandem(["check", path])
        #expect(check.status == 1 && check.stdout.contains("transaction ids go back at entry 3"), "\(check.stdout) \(check.stderr)")
        let file = dir.path("schema.json")
        try notesSchema.jsonData().write(to: URL(fileURLWithPath: file))
        let repaired = try runTandem(["init", path, "--schema", file])
        #expect(repaired.status == 0 && repaired.stdout.contains("went back at entry 3"), "\(repaired.stdout) \(repaired.stderr)")
        #expect(try runTandem(["check", path]).status == 0)
        let db = try SharedDatabase(path: path)
        #expect(try transactions(db) == [["a"], ["b"], ["c"], ["d"]])
        let ids = try db.read { try UploadQueueRows.head(transactions: 10, in: $0) }.map(\.transactionID)
        #expect(ids == ids.sorted() && Set(ids).count == 4, "\(ids)")
    }
}
