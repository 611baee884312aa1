import Foundation
import Testing
@testable import Tandem

@Suite struct UploadQueueTests {
    let dir: TemporaryDirectory
    let db: SharedDatabase

    init() throws {
        dir = try TemporaryDirectory()
        db = try SharedDatabase(path: dir.path("a.db"), schema: queueSchema)
    }

    func entries() throws -> [CrudEntry] {
        try db.uploadQueue.transactions(limit: 1000).flatMap(\.entries)
    }

    @Test func capturesPutPatchDeleteInPowerSyncShape() throws {
        try db.execute("INSERT INTO notes(id, title, done) VALUES ('n1', 'a', 0)")
        try db.execute("UPDATE notes SET done = 1 WHERE id = 'n1'")
        try db.execute("UPDATE notes SET done = 1 WHERE id = 'n1'")  // no change: no entry
        try db.execute("DELETE FROM notes WHERE id = 'n1'")
        let raw = try db.fetchAll("SELECT data FROM ps_crud ORDER BY id").map { $0[0].stringValue ?? "" }
        #expect(
            raw == [
                #"{"op":"PUT","type":"notes","id":"n1","data":{"title":"a","done":0,"score":null}}"#,
                #"{"op":"PATCH","type":"notes","id":"n1","data":{"done":1}}"#,
                #"{"op":"DELETE","type":"notes","id":"n1"}"#,
            ])
        let decoded = try entries()
        #expect(decoded.map(\.op) == [.put, .patch, .delete])
        #expect(decoded[1].data == ["done": .integer(1)])
    }

    @Test func patchCarriesASetToNull() throws {
        try db.execute("INSERT INTO notes(id, title, done) VALUES ('n1', 'a', 0)")
        try db.execute("UPDATE notes SET title = NULL WHERE id = 'n1'")
        #expect(try entries().last?.data == ["title": .null])
    }

    @Test func oneTransactionIdPerWriteTransaction() throws {
        try db.write { tx in
            try tx.execute("INSERT INTO notes(title) VALUES ('a')")
            try tx.execute("INSERT INTO notes(title) VALUES ('b')")
        }
        try db.execute("INSERT INTO notes(title) VALUES ('c')")
        let transactions = try db.uploadQueue.transactions(limit: 10)
        #expect(transactions.map { $0.entries.count } == [2, 1])
        #expect(transactions[0].transactionID < transactions[1].transactionID)
        #expect(try db.uploadQueue.next()?.entries.count == 2)
    }

    @Test func insertWithoutIdGetsALowercaseUUIDAndIdsCannotChange() throws {
        try db.execute("INSERT INTO notes(title) VALUES ('a')")
        let id = try #require(try db.fetchAll("SELECT id FROM notes").first?[0].stringValue)
        #expect(id.range(of: "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", options: .regularExpression) != nil)
        #expect(try entries().first?.rowID == id)
        #expect(throws: SQLiteError.self) { try db.execute("UPDATE notes SET id = 'other' WHERE id = ?", [id]) }
        #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO notes(id, title) VALUES ('', 'x')") }
        let uuid = try db.read { try $0.scalar("SELECT uuid()").stringValue ?? "" }
        #expect(uuid.count == 36 && uuid == uuid.lowercased())
    }

    @Test func failedStatementRollsBackTheWholeTransaction() throws {
        #expect(throws: SQLiteError.self) {
            try db.write { tx in
                try tx.execute("INSERT INTO notes(id, title) VALUES ('x', 'a')")
                try tx.execute("INSERT INTO notes(id, title) VALUES ('x', 'duplicate')")
            }
        }
        #expect(try count(db, "SELECT count(*) FROM ps_crud") == 0)
        #expect(try count(db, "SELECT count(*) FROM notes") == 0)
    }

    @Test func localOnlyAndInsertOnlyTables() throws {
        try db.execute("INSERT INTO drafts(id, body) VALUES ('d', 'local')")
        try db.execute("UPDATE drafts SET body = 'edited'")
        #expect(try count(db, "SELECT count(*) FROM ps_crud") == 0)
        #expect(try db.fetchAll("SELECT body FROM drafts").first?[0] == .text("edited"))
        #expect(try count(db, "SELECT count(*) FROM ps_data_local__drafts") == 1)

        try db.execute("INSERT INTO events(kind) VALUES ('click')")
        #expect(try count(db, "SELECT count(*) FROM events") == 0)
        #expect(try entries().map(\.table) == ["events"])
        do {
            try db.execute("DELETE FROM events")
            try db.execute("INSERT INTO events(id, kind) VALUES ('e', 'x')")
            try db.execute("UPDATE events SET kind = 'y'")
        }
        #expect(try entries().count == 2)
    }

    @Test func completeRemovesUploadedTransactionsOnly() throws {
        try db.execute("INSERT INTO notes(title) VALUES ('a')")
        try db.execute("INSERT INTO notes(title) VALUES ('b')")
        let first = try #require(try db.uploadQueue.next())
        try db.uploadQueue.complete([first], epoch: 0)
        #expect(try db.uploadQueue.pendingCount() == 1)
        #expect(try db.uploadQueue.next()?.entries.first?.data?["title"] == .string("b"))
    }

    /// CRUD entry ids only grow, also once the queue has emptied: through the view, the bulk
    /// path, the shell, and after the queue is cleared.
    @Test func entryIDsNeverGoBackWhenTheQueueEmpties() throws {
        var seen: [Int64] = []
        func drain() throws {
            let all = try db.uploadQueue.transactions(limit: 100)
            seen += all.flatMap(\.entries).map(\.id)
            try db.uploadQueue.complete(all, epoch: 0)
            #expect(try db.uploadQueue.pendingCount() == 0)
        }
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'x')")
        try db.execute("INSERT INTO events(kind) VALUES ('k')")
        try drain()
        try db.write { tx in try tx.insert(into: "notes", columns: ["id"], rows: [[.text("b")], [.text("c")]]) }
        try db.execute("UPDATE notes SET title = 'y' WHERE id = 'a'")
        try drain()
        let shell = try Spawned(executable: "/usr/bin/sqlite3", [db.path, "DELETE FROM notes WHERE id = 'b'"])
        #expect(try shell.wait() == 0, "\(shell.stderr)")
        try drain()
        try db.execute("INSERT INTO events(kind) VALUES ('l')")
        _ = try db.sync.disconnectAndClear(discardPending: true)
        try db.execute("INSERT INTO events(kind) VALUES ('m')")
        try drain()
        #expect(seen == seen.sorted() && Set(seen).count == seen.count, "ids \(seen)")
        #expect(seen.count == 7, "ids \(seen)")
        #expect(
            try db.fetchAll("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'")[0][0] == .integer(0),
            "no AUTOINCREMENT bookkeeping (one page less per commit)")
    }

    /// A database made when the queue was an `AUTOINCREMENT` table keeps counting from the
    /// highest id that table ever gave.
    @Test func aQueueMadeWithAutoincrementKeepsItsCount() throws {
        let old = dir.path("old.db")
        do {
            let made = try SharedDatabase(path: old, schema: notesSchema)
            try made.execute("INSERT INTO notes(id, title) VALUES ('a', 'x')")
        }
        let rewrite = try Spawned(
            executable: "/usr/bin/sqlite3",
            [
                old,
                """
                BEGIN; DROP TABLE ps_crud;
                CREATE TABLE ps_crud(id INTEGER PRIMARY KEY AUTOINCREMENT, tx_id INTEGER NOT NULL, data TEXT NOT NULL);
                INSERT INTO ps_crud(id, tx_id, data) VALUES (500, 1, '{}'); DELETE FROM ps_crud;
                DELETE FROM ps_state WHERE key = 'crud_last'; UPDATE ps_kv SET value = 3 WHERE key = 'layout'; COMMIT;
                """,
            ])
        #expect(try rewrite.wait() == 0, "\(rewrite.stderr)")
        let reopened = try SharedDatabase(path: old, schema: notesSchema)
        try reopened.execute("INSERT INTO notes(id, title) VALUES ('b', 'y')")
        #expect(try reopened.uploadQueue.transactions(limit: 10).flatMap(\.entries).map(\.id) == [501])
    }

    /// Entries queued by triggers that do not keep the id counter (an older Tandem regenerated
    /// its own) are counted when the layout is upgraded again: no id is given twice.
    @Test func entriesQueuedBehindTheCounterAreCountedAtOpen() throws {
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'x')")
        let behind = try Spawned(
            executable: "/usr/bin/sqlite3",
            [
                db.path,
                "INSERT INTO ps_crud(id, tx_id, data) VALUES (40, 9, '{\"op\":\"DELETE\",\"type\":\"notes\",\"id\":\"zz\"}'); UPDATE ps_kv SET value = 3 WHERE key = 'layout'",
            ])
        #expect(try behind.wait() == 0, "\(behind.stderr)")
        let reopened = try SharedDatabase(path: db.path, schema: db.schema)
        try reopened.execute("INSERT INTO notes(id, title) VALUES ('b', 'y')")
        let ids = try reopened.fetchAll("SELECT id FROM ps_crud ORDER BY id").map { $0[0] }
        #expect(ids == [.integer(1), .integer(40), .integer(41)], "\(ids)")
    }

    @Test func writesFromTheSQLiteShellAreCapturedWithFreshTransactionIds() throws {
        let shell = try Spawned(executable: "/usr/bin/sqlite3", [db.path, "INSERT INTO notes(title) VALUES ('shell')"])
        #expect(try shell.wait() == 0, "\(shell.stderr)")
        let first = try #require(try db.uploadQueue.next())
        #expect(first.entries.first?.data?["title"] == .string("shell"))
        try db.uploadQueue.complete([first], epoch: 0)
        let again = try Spawned(executable: "/usr/bin/sqlite3", [db.path, "INSERT INTO notes(title) VALUES ('shell 2')"])
        #expect(try again.wait() == 0)
        let second = try #require(try db.uploadQueue.next())
        #expect(second.transactionID > first.transactionID)
    }
}
