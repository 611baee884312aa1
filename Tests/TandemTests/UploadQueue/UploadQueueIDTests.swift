import Foundation
import Testing
@testable import Tandem

/// The upload queue's id counter (`crud_last` in `ps_state`, in place of `AUTOINCREMENT`):
/// ids never go back and no write fails or loses its entry when the counter is behind or missing.
@Suite struct UploadQueueIDTests {
    let dir: TemporaryDirectory
    let db: SharedDatabase

    init() throws {
        dir = try TemporaryDirectory()
        db = try SharedDatabase(path: dir.path("a.db"), schema: queueSchema)
    }

    func ids() throws -> [Int64] {
        try db.fetchAll("SELECT id FROM ps_crud ORDER BY id").compactMap { $0[0].int64Value }
    }

    func crudLast() throws -> Int64? {
        try db.fetchAll("SELECT value FROM ps_state WHERE key = 'crud_last'").first?[0].int64Value
    }

    func shell(_ sql: String) throws {
        let s = try Spawned(executable: "/usr/bin/sqlite3", [db.path, sql])
        #expect(try s.wait() == 0, "\(s.stderr)")
    }

    // MARK: - a bulk insert error caught inside the write (documented as allowed)

    /// `Transaction.insert` documents that rows of batches before a failing one stay in the
    /// transaction. A caller that catches the error and commits keeps those CRUD entries, and
    /// the counter covers them.
    @Test func aCaughtBulkInsertErrorLeavesTheCounterCurrent() throws {
        let rows: [[DatabaseValue]] = (0..<40).map { [.text("r\($0)")] } + [[.text("r0")]]  // duplicate after first 32-row flush
        try db.write { tx in
            do { try tx.insert(into: "notes", columns: ["id"], rows: rows) } catch {}
        }
        let queued = try ids()
        #expect(queued.count >= 32, "\(queued)")
        let last = try crudLast()
        #expect(last == queued.max(), "counter \(String(describing: last)) behind max id \(String(describing: queued.max()))")
        // The next write through the view must succeed with a fresh id.
        #expect(throws: Never.self) { try db.execute("INSERT INTO notes(id, title) VALUES ('next', 'x')") }
        // Nor may the bulk path fail.
        #expect(throws: Never.self) { try db.write { tx in try tx.insert(into: "notes", columns: ["id"], rows: [[.text("bulk")]]) } }
    }

    /// INSERT OR IGNORE through the view applies its conflict policy to the trigger's statements
    /// too: a CRUD insert on a taken id would be dropped while the row is written. It is not.
    @Test func insertOrIgnoreThroughTheViewQueuesItsEntry() throws {
        let rows: [[DatabaseValue]] = (0..<40).map { [.text("r\($0)")] } + [[.text("r0")]]
        try db.write { tx in
            do { try tx.insert(into: "notes", columns: ["id"], rows: rows) } catch {}
        }
        let before = try ids().count
        try db.execute("INSERT OR IGNORE INTO notes(id, title) VALUES ('lost', 'x')")
        let rowThere = try db.fetchAll("SELECT count(*) FROM notes WHERE id = 'lost'")[0][0] == .integer(1)
        let queuedForIt = try db.fetchAll("SELECT count(*) FROM ps_crud WHERE data ->> '$.id' = 'lost'")[0][0] == .integer(1)
        let after = try ids().count
        #expect(!rowThere || queuedForIt, "row written locally but no CRUD entry queued (before \(before), after \(after))")
    }

    /// INSERT OR REPLACE through the view: the CRUD insert replaces no queued entry.
    @Test func insertOrReplaceThroughTheViewOverwritesNoQueuedEntry() throws {
        let rows: [[DatabaseValue]] = (0..<40).map { [.text("r\($0)")] } + [[.text("r0")]]
        try db.write { tx in
            do { try tx.insert(into: "notes", columns: ["id"], rows: rows) } catch {}
        }
        let before = try db.fetchAll("SELECT id, data FROM ps_crud ORDER BY id").map { "\($0[0]) \($0[1])" }
        try db.execute("INSERT OR REPLACE INTO notes(id, title) VALUES ('clobber', 'x')")
        let after = try db.fetchAll("SELECT id, data FROM ps_crud ORDER BY id").map { "\($0[0]) \($0[1])" }
        #expect(Set(before).isSubset(of: Set(after)), "a queued entry was overwritten: \(Set(before).subtracting(after))")
        #expect(after.count == before.count + 1)
    }

    // MARK: - entries written without the counter (an older Tandem's bulk path)

    /// An entry queued without the counter (an older Tandem's bulk path wrote no id) is
    /// reported by the layout check, and a writer opening the file catches the counter up.
    @Test func anEntryQueuedWithoutTheCounterIsReportedAndCaughtUp() throws {
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'x')")
        // As the old RowInserter wrote it: the open transaction id, no entry id.
        try shell("INSERT INTO ps_crud(tx_id, data) SELECT value, '{\"op\":\"PUT\",\"type\":\"notes\",\"id\":\"old\",\"data\":{}}' FROM ps_state WHERE key = 'next_tx'")
        #expect(try db.checkLayout().map(\.problem) == ["Tandem's upload queue id counter (crud_last) is 1, below entry 2 in the upload queue"])
        let reopened = try SharedDatabase(path: db.path, schema: db.schema)
        #expect(try crudLast() == 2)
        try reopened.execute("INSERT INTO notes(id, title) VALUES ('b', 'y')")
        try reopened.write { tx in try tx.insert(into: "notes", columns: ["id"], rows: [[.text("c")]]) }
        #expect(try ids() == [1, 2, 3, 4])
        #expect(try db.checkLayout().isEmpty)
        // The same lag mended by repair.
        try shell("INSERT INTO ps_crud(tx_id, data) SELECT value, '{\"op\":\"DELETE\",\"type\":\"notes\",\"id\":\"zz\"}' FROM ps_state WHERE key = 'next_tx'")
        let repaired = try db.repairLayout().map(\.problem)
        #expect(repaired == ["Tandem's upload queue id counter (crud_last) is 4, below entry 5 in the upload queue"], "\(repaired)")
        try db.execute("INSERT INTO notes(id, title) VALUES ('d', 'y')")
        #expect(try ids() == [1, 2, 3, 4, 5, 6])
    }

    // MARK: - missing counter

    /// A missing `crud_last` (a damaged `ps_state`) is reported, and recreated from the queue by
    /// a writer's open or by repair; meanwhile SQLite gives the next rowid, so while entries are
    /// queued no id goes back. (With the queue empty as well, nothing records the last id any
    /// more: ids restart after the highest one left, as an `AUTOINCREMENT` table's would without
    /// its `sqlite_sequence` row.)
    @Test func aMissingCounterIsReportedAndIdsNeverGoBack() throws {
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'x')")
        try db.execute("INSERT INTO notes(id, title) VALUES ('b', 'x')")
        try shell("DELETE FROM ps_state WHERE key = 'crud_last'")
        #expect(try db.checkLayout().map(\.problem) == ["Tandem's upload queue id counter (crud_last) is missing"])
        try db.execute("INSERT INTO notes(id, title) VALUES ('c', 'x')")
        #expect(try ids() == [1, 2, 3])
        _ = try SharedDatabase(path: db.path, schema: db.schema)
        #expect(try crudLast() == 3)
        try shell("DELETE FROM ps_state WHERE key = 'crud_last'")
        #expect(try db.repairLayout().map(\.problem) == ["Tandem's upload queue id counter (crud_last) is missing"])
        #expect(try crudLast() == 3)
    }

    /// An `AUTOINCREMENT` queue with the counter missing: the bulk path counts on from
    /// `sqlite_sequence`, not from the (empty) queue.
    @Test func aMissingCounterOnAnAutoincrementQueueKeepsItsCount() throws {
        try shell(
            """
            BEGIN; DROP TABLE ps_crud;
            CREATE TABLE ps_crud(id INTEGER PRIMARY KEY AUTOINCREMENT, tx_id INTEGER NOT NULL, data TEXT NOT NULL);
            INSERT INTO ps_crud(id, tx_id, data) VALUES (500, 1, '{}'); DELETE FROM ps_crud;
            DELETE FROM ps_state WHERE key = 'crud_last'; COMMIT;
            """)
        try db.write { tx in try tx.insert(into: "notes", columns: ["id"], rows: [[.text("bulk")]]) }
        let got = try ids()
        #expect(got.allSatisfy { $0 > 500 }, "\(got)")
    }

    // MARK: - ordinary paths

    @Test func savepointRollbackThenWriteGivesNoDuplicate() throws {
        try db.write { tx in
            try tx.execute("INSERT INTO notes(id, title) VALUES ('a', 'x')")
            try tx.execute("SAVEPOINT s")
            try tx.execute("INSERT INTO notes(id, title) VALUES ('b', 'x')")
            try tx.insert(into: "notes", columns: ["id"], rows: (0..<40).map { [.text("s\($0)")] })
            try tx.execute("ROLLBACK TO s")
            try tx.execute("RELEASE s")
            try tx.execute("INSERT INTO notes(id, title) VALUES ('c', 'x')")
            try tx.insert(into: "notes", columns: ["id"], rows: [[.text("d")]])
        }
        #expect(try ids() == [1, 2, 3])
        #expect(try crudLast() == 3)
    }

    @Test func writesThatQueueNothingLeaveTheCounter() throws {
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'x')")
        try db.execute("UPDATE notes SET title = 'x' WHERE id = 'a'")
        try db.execute("INSERT OR IGNORE INTO notes(id, title) VALUES ('a', 'zz')")
        try db.execute("INSERT INTO drafts(body) VALUES ('local')")
        try db.execute("UPDATE drafts SET body = 'l2'")
        try db.execute("DELETE FROM drafts")
        try db.write { tx in try tx.insert(into: "drafts", columns: ["body"], rows: [[.text("b")]]) }
        #expect(try ids() == [1])
        #expect(try crudLast() == 1)
        try db.execute("INSERT OR REPLACE INTO notes(id, title) VALUES ('a', 'r')")
        try db.execute("UPDATE OR REPLACE notes SET title = 'q' WHERE id = 'a'")
        try db.execute("INSERT INTO events(kind) VALUES ('k'), ('l')")
        try db.write { tx in try tx.insert(into: "events", columns: ["kind"], rows: (0..<70).map { [.text("e\($0)")] }) }
        try db.execute("UPDATE notes SET title = title || '!'")  // multi-row update through the view
        try db.execute("DELETE FROM notes")
        let all = try ids()
        #expect(all == Array(1...Int64(all.count)), "\(all)")
        #expect(try crudLast() == Int64(all.count))
        // PATCH applied from the entry the update trigger just queued (last_insert_rowid).
        try db.execute("INSERT INTO notes(id, title) VALUES ('p', 'x')")
        try db.execute("UPDATE notes SET title = 'patched' WHERE id = 'p'")
        #expect(try db.fetchAll("SELECT title FROM notes WHERE id = 'p'")[0][0] == .text("patched"))
    }

    @Test func backupRestoreKeepsTheCounter() throws {
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'x')")
        try db.uploadQueue.complete(try db.uploadQueue.transactions(limit: 10), epoch: 0)
        let copy = dir.path("copy.db")
        try db.backup(to: copy)
        let restored = try SharedDatabase(path: copy, schema: db.schema)
        try restored.execute("INSERT INTO notes(id, title) VALUES ('b', 'x')")
        #expect(try restored.fetchAll("SELECT id FROM ps_crud").map { $0[0] } == [.integer(2)])
        let shellWrite = try Spawned(
            executable: "/usr/bin/sqlite3", [copy, "INSERT INTO notes(id, title) VALUES ('c', 'x'); UPDATE notes SET title = 'z' WHERE id = 'c'; DELETE FROM notes WHERE id = 'b'"])
        #expect(try shellWrite.wait() == 0, "\(shellWrite.stderr)")
        #expect(try restored.fetchAll("SELECT id FROM ps_crud ORDER BY id").map { $0[0] } == [.integer(2), .integer(3), .integer(4), .integer(5)])
    }

    /// A local-only table switched to synced queues its rows (queuePuts) after existing entries.
    @Test func localOnlySwitchQueuesPastTheCounter() throws {
        try db.execute("INSERT INTO drafts(id, body) VALUES ('d1', 'a'), ('d2', 'b')")
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'x')")
        try db.uploadQueue.complete(try db.uploadQueue.transactions(limit: 10), epoch: 0)
        let synced = Schema(
            tables: notesSchema.tables + [
                TableSchema(name: "drafts", columns: [.text("body")]),
                TableSchema(name: "events", columns: [.text("kind")], insertOnly: true),
            ])
        let reopened = try SharedDatabase(path: db.path, schema: synced)
        try reopened.execute("INSERT INTO notes(id, title) VALUES ('b', 'x')")
        #expect(try reopened.fetchAll("SELECT id FROM ps_crud ORDER BY id").map { $0[0] } == [.integer(2), .integer(3), .integer(4)])
    }
}
