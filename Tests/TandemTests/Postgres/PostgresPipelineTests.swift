import Foundation
import Synchronization
import Testing
@testable import Tandem
@testable import TandemPostgres

/// The upload's one-round-trip path against a real server: it applies an ordinary batch, and
/// leaves to the statement-by-statement path, with nothing applied, every batch that path must
/// decide about.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct PostgresPipelineTests {
    private func transaction(_ id: Int64, _ op: CrudEntry.Operation, _ row: String, _ data: [String: JSONValue]?, table: String = "notes") -> CrudTransaction {
        CrudTransaction(transactionID: id, entries: [CrudEntry(id: id, transactionID: id, op: op, table: table, rowID: row, data: data)])
    }

    @Test func oneRoundTripAppliesOrdinaryBatchesAndLeavesTheRestToTheOtherPath() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let admin = try PostgresConnection(url)
        try admin.execute("ALTER TABLE notes ADD CONSTRAINT refused CHECK (title IS DISTINCT FROM 'refused')")
        let db = try PostgresConnection(url)
        let upload = PostgresUpload(db: db, columns: try PostgresSetup.columnRegistry(on: db).types)
        func state() throws -> [String?] {
            try ["SELECT count(*) FROM tandem_changes", "SELECT count(*) FROM tandem_uploads", "SELECT string_agg(id || '=' || coalesce(title, '-'), ',' ORDER BY id) FROM notes"]
                .map { try admin.execute($0).first?.first ?? nil }
        }
        #expect(
            try upload.uploadInOneRoundTrip(
                [transaction(1, .put, "a", ["title": .string("x"), "score": .double(-0.0)]), transaction(2, .put, "b", ["title": .string("y")])],
                clientID: "c", epoch: 2) == .applied)
        #expect(try state() == ["2", "1", "a=x,b=y"])
        #expect(
            try upload.uploadInOneRoundTrip([transaction(3, .patch, "a", ["title": .string("z")]), transaction(4, .delete, "b", nil)], clientID: "c", epoch: 2)
                == .applied)
        let applied = try state()
        #expect(applied == ["4", "2", "a=z"])
        #expect(try admin.execute("SELECT score::text FROM notes WHERE id = 'a'").first?.first == "-0")

        let others: [(String, [CrudTransaction], Int64, PostgresUpload.OneRoundTrip)] = [
            ("a retry", [transaction(4, .delete, "b", nil), transaction(5, .put, "c", ["title": .string("new")])], 2, .leftToStatements),
            ("an older epoch", [transaction(5, .put, "c", ["title": .string("new")])], 1, .leftToStatements),
            ("a PATCH of a missing row", [transaction(5, .patch, "gone", ["title": .string("new")])], 2, .leftToStatements),
            ("a value the column cannot take", [transaction(5, .put, "c", ["done": .double(2.5)])], 2, .leftToStatements),
            ("a row the server refuses", [transaction(5, .put, "c", ["title": .string("refused")])], 2, .rowRefused),
            ("a table the server does not sync", [transaction(5, .put, "c", [:], table: "elsewhere")], 2, .leftToStatements),
        ]
        for (what, batch, epoch, outcome) in others {
            #expect(try upload.uploadInOneRoundTrip(batch, clientID: "c", epoch: epoch) == outcome, "\(what)")
            #expect(try state() == applied, "\(what) applied nothing")
        }
        // The connection is usable after each: the next batch goes through.
        #expect(try upload.uploadInOneRoundTrip([transaction(5, .put, "c", ["title": .string("new")])], clientID: "c", epoch: 2) == .applied)
        #expect(try state() == ["5", "3", "a=z,c=new"])
    }

    /// A PATCH of a row that another transaction is inserting: the deletion it logs when the
    /// row is missing waits for that insert on the row's key. When that wait fails for a reason
    /// retrying can fix (here `lock_timeout`; a pooler's forgotten prepared statement is
    /// another), the upload fails and is retried: no deletion is logged, and the retry, after
    /// the insert committed, patches the row.
    @Test func aTransientFailureWhileLoggingAMissingRowIsRetriedNotTakenForADeletion() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let backend = try PostgresBackend(conninfo: url)
        let inserting = try PostgresConnection(url)
        try inserting.execute("BEGIN")
        try inserting.execute("INSERT INTO notes(id, title) VALUES ('r', 'inserted')")
        _ = try backend.withConnection { try $0.execute("SET lock_timeout = '100ms'") }
        let patch = transaction(1, .patch, "r", ["title": .string("patched")])
        do {
            try backend.upload([patch], clientID: "c", epoch: 1)
            Issue.record("the upload went through while the insert held the row's key")
        } catch let error as PostgresError {
            #expect(error.sqlState == "55P03" && !error.isPermanent, "\(error)")
        }
        try inserting.execute("COMMIT")
        let admin = try PostgresConnection(url)
        #expect(try admin.execute("SELECT count(*) FROM tandem_changes WHERE id = 'r' AND op = 'DELETE'") == [["0"]], "no deletion logged")
        try backend.upload([patch], clientID: "c", epoch: 1)
        #expect(try admin.execute("SELECT title FROM notes WHERE id = 'r'") == [["patched"]])
    }

    /// A batch with a row the server refuses (a CHECK constraint on a PUT or a PATCH, a trigger
    /// refusing a DELETE) is refused naming that row, nothing of it applied (the one-round-trip
    /// path hands it straight to the one that applies an entry at a time); without that row the
    /// rest applies.
    @Test(arguments: [CrudEntry.Operation.put, .patch, .delete]) func aRowTheServerRefusesIsNamedAndNothingOfItsBatchApplies(op: CrudEntry.Operation) throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let admin = try PostgresConnection(url)
        try admin.execute("INSERT INTO notes(id, title) VALUES ('bad', 'kept')")
        try admin.execute("ALTER TABLE notes ADD CONSTRAINT refused CHECK (title IS DISTINCT FROM 'refused')")
        try admin.execute(
            "CREATE FUNCTION keep() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'kept' USING ERRCODE = 'check_violation'; END $$")
        try admin.execute("CREATE TRIGGER keep BEFORE DELETE ON notes FOR EACH ROW WHEN (OLD.id = 'bad') EXECUTE FUNCTION keep()")
        let backend = try PostgresBackend(conninfo: url)
        let batch = [
            transaction(1, .put, "a", ["title": .string("x")]),
            transaction(2, op, "bad", op == .delete ? nil : ["title": .string("refused")]),
            transaction(3, .put, "c", ["title": .string("y")]),
        ]
        func state() throws -> String? {
            try admin.execute("SELECT string_agg(id || '=' || title, ',' ORDER BY id) || ' ' || (SELECT count(*) FROM tandem_uploads) FROM notes").first?.first ?? nil
        }
        let error = #expect(throws: TandemError.self) { try backend.upload(batch, clientID: "c", epoch: 1) }
        guard case .uploadRejected(let table, let rowID, _)? = error else {
            Issue.record("not a rejected upload: \(String(describing: error))")
            return
        }
        #expect(table == "notes" && rowID == "bad")
        #expect(try state() == "bad=kept 0", "nothing of the batch applied")
        try backend.upload([batch[0], batch[2]], clientID: "c", epoch: 1)
        #expect(try state() == "a=x,bad=kept,c=y 1")
    }

    /// An upload that waits for another upload of the same client (on the client's epoch row)
    /// sees the markers that one committed, also where the server's default isolation is
    /// `REPEATABLE READ` (whose snapshot, taken before the wait, would miss them and apply a
    /// transaction a second time).
    @Test func anUploadThatWaitedSeesTheMarkersOfTheOneBefore() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let admin = try PostgresConnection(url)
        let name = try #require(try admin.execute("SELECT current_database()").first?.first ?? nil)
        try admin.execute("ALTER DATABASE \(SQLText.identifier(name)) SET default_transaction_isolation = 'repeatable read'")
        let backend = try PostgresBackend(conninfo: url)
        try backend.upload([transaction(1, .put, "a", ["title": .string("first")])], clientID: "c", epoch: 1)
        // Another upload of client c holds its epoch row and commits a marker for 5 and 6.
        let other = try PostgresConnection(url)
        try other.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        try other.execute("SELECT epoch FROM tandem_clients WHERE client_id = 'c' FOR UPDATE")
        try other.execute("INSERT INTO tandem_uploads(client_id, tx_id, last_tx_id, tx_ids, digests, digest) VALUES ('c', 5, 6, '{5,6}', '{d5,d6}', '')")
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<(any Error)?>(nil)
        DispatchQueue.global().async {
            do {
                try backend.upload([transaction(6, .put, "b", ["title": .string("again")]), transaction(7, .put, "c", [:])], clientID: "c", epoch: 1)
            } catch {
                outcome.withLock { $0 = error }
            }
            done.signal()
        }
        // Bounded wait until the upload waits for the row lock.
        let deadline = Date(timeIntervalSinceNow: 20)
        while try admin.execute("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").isEmpty {
            guard Date() < deadline else { throw TestFailure("the upload never waited for the epoch row") }
            usleep(2_000)
        }
        try other.execute("COMMIT")
        guard done.wait(timeout: .now() + 20) == .success else { throw TestFailure("the upload did not end") }
        #expect(
            outcome.withLock { $0 as? TandemError } == TandemError.transactionConflict(clientID: "c", transactionID: 6, highest: 6),
            "\(String(describing: outcome.withLock { $0 }))")
        #expect(try admin.execute("SELECT count(*) FROM notes").first?.first == "1", "transaction 6 was not applied again")
    }

    /// Text and ids with NUL, which PostgreSQL's text cannot store and libpq would cut a
    /// parameter at (also where a combining mark follows it and makes one character of the two),
    /// are stored escaped (``PostgresText``) on either path and read back exactly as written; row
    /// "a" is never taken for "a\u{0}x". Other applications see the escaped form.
    @Test func textAndIdsWithNULReadBackExactlyNeverCut() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let backend = try PostgresBackend(conninfo: url)
        let admin = try PostgresConnection(url)
        let start = try backend.fetchChanges(after: "", limit: 1000).nextCursor
        let texts = ["a\u{0}b", "a\u{0}\u{301}", "\u{0}", "x\u{0}\u{0}y", "\u{FFFF}", "\u{FFFF}0", "\u{FFFF}\u{0}\u{FFFF}\u{FFFF}", "plain"]
        var written: [String: String] = [:]
        for (index, text) in texts.enumerated() {
            let id = Int64(index * 2 + 1)
            let alone = transaction(id, .put, "n\(id)", ["title": .string(text)])
            let batched = [transaction(id + 1, .put, "n\(id)\u{0}b", ["title": .string(text)]), transaction(id + 100, .put, "m\(id)", [:])]
            try backend.upload([alone], clientID: "c", epoch: 1)
            try backend.upload(batched, clientID: "c", epoch: 1)
            written["n\(id)"] = text
            written["n\(id)\u{0}b"] = text
        }
        #expect(try admin.execute("SELECT title FROM notes WHERE id = 'n1'").first?.first == "a\u{FFFF}0b", "others see the escaped form")
        // Ids with NUL, for every operation, alone and in a batch: row "a" is untouched.
        try backend.upload([transaction(50, .put, "a", ["title": .string("kept")])], clientID: "c", epoch: 1)
        try backend.upload([transaction(51, .put, "a\u{0}x", ["title": .string("x")]), transaction(52, .put, "b\u{0}", ["title": .string("y")])], clientID: "c", epoch: 1)
        try backend.upload([transaction(53, .patch, "a\u{0}x", ["title": .string("patched\u{0}")])], clientID: "c", epoch: 1)
        try backend.upload([transaction(54, .delete, "b\u{0}", nil), transaction(55, .patch, "a", ["title": .string("kept")])], clientID: "c", epoch: 1)
        written["a"] = "kept"
        written["a\u{0}x"] = "patched\u{0}"
        var read: [String: String] = [:]
        var cursor = start
        while true {
            let batch = try backend.fetchChanges(after: cursor, limit: 1000)
            for change in batch.changes {
                guard change.op == .put, case .object(let row)? = try change.data.map({ try JSONValue(parsing: $0) }), case .string(let title)? = row["title"] else {
                    read[change.rowID] = nil
                    continue
                }
                read[change.rowID] = title
            }
            cursor = batch.nextCursor
            if !batch.hasMore { break }
        }
        for (id, text) in written { #expect(read[id] == text, "\(id.debugDescription): \(read[id].debugDescription) for \(text.debugDescription)") }
        #expect(read["b\u{0}"] == nil && read["a"] == "kept")
        // A full sync reads the same.
        let full = try backend.fetchChanges(after: "", limit: 1000)
        let fullTitles = Dictionary(
            uniqueKeysWithValues: try full.changes.compactMap { change -> (String, String)? in
                guard case .object(let row)? = try change.data.map({ try JSONValue(parsing: $0) }), case .string(let title)? = row["title"] else { return nil }
                return (change.rowID, title)
            })
        for (id, text) in written { #expect(fullTitles[id] == text, "full sync: \(id.debugDescription)") }
    }
}
