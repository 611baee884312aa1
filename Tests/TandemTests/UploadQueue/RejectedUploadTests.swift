import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// One upload the backend refuses for good never stops a client's sync: it is set aside with the
/// server's error, later uploads and every download go on, and the user retries or discards it.
@Suite struct RejectedUploadTests {
    @Test func aRefusedTransactionIsSetAsideAndTheRestGoesOn() throws {
        let dir = try TemporaryDirectory()
        let backend = RefusingBackend()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        // Refused transactions in the middle of one upload batch, and at its head.
        try db.execute("INSERT INTO notes(id, title) VALUES ('bad-first', 'x')")
        for i in 0..<100 { try db.execute("INSERT INTO notes(id, title) VALUES (?, 'ok')", [i == 50 ? "bad-middle" : "ok\(i)"]) }
        try db.write { tx in
            try tx.execute("INSERT INTO notes(id, title) VALUES ('ok-same-tx', 'x')")
            try tx.execute("INSERT INTO notes(id, title) VALUES ('bad-same-tx', 'x')")
        }
        try backend.inner.upload(
            [
                CrudTransaction(
                    transactionID: 1,
                    entries: [
                        CrudEntry(id: 1, transactionID: 1, op: .put, table: "notes", rowID: "from-server", data: ["title": .string("s")])
                    ])
            ],
            clientID: "other", epoch: 1)
        let result = try db.sync.once(with: backend)
        #expect(result.transactions == 99)
        let rejected = try db.uploadQueue.rejected()
        #expect(rejected.map { $0.transaction.entries.map(\.rowID) } == [["bad-first"], ["bad-middle"], ["ok-same-tx", "bad-same-tx"]])
        #expect(rejected.allSatisfy { $0.error.contains("a constraint refuses it") })
        #expect(try db.uploadQueue.pendingCount() == 0)
        #expect(try db.sync.status().rejectedUploads == 3)
        #expect(try count(db, "SELECT count(*) FROM notes WHERE id = 'from-server'") == 1, "downloads go on")
        // The CLI lists them, retries one (still refused: set aside again) and discards another.
        let listed = try tandem(["crud", db.path, "--json"])
        #expect(listed.stdout.contains(#""rejected":true"#) && listed.stdout.contains("bad-middle"), "\(listed.stdout)")
        let middle = try #require(rejected.first { $0.transaction.entries.first?.rowID == "bad-middle" }).transaction.transactionID
        #expect(try tandem(["crud", db.path, "--discard", String(middle)]).status == 0)
        #expect(try db.uploadQueue.rejected().count == 2)
        #expect(try db.uploadQueue.retryRejected() == 2)
        #expect(try db.uploadQueue.transactions(limit: 10).map { $0.entries.map(\.rowID) } == [["bad-first"], ["ok-same-tx", "bad-same-tx"]])
        _ = try db.sync.once(with: backend)
        #expect(try db.uploadQueue.rejected().count == 2 && db.uploadQueue.pendingCount() == 0)
        #expect(try tandem(["crud", db.path, "--discard", "all"]).status == 0)
        #expect(try db.uploadQueue.rejected().isEmpty)
    }

    /// PostgreSQL's error classes tell a refusal retrying cannot fix from a transient failure.
    @Test func postgresErrorClassesTellPermanentFromTransient() {
        let permanent = ["22P02", "22003", "23505", "23514", "23502", "42501", "42703", "42P01", "44000"]
        let transient = ["08006", "08001", "40001", "40P01", "53300", "55P03", "57014", "57P01", "58030", "XX000", "25006"]
        for state in permanent { #expect(PostgresError("x", sqlState: state).isPermanent, "\(state)") }
        for state in transient { #expect(!PostgresError("x", sqlState: state).isPermanent, "\(state)") }
        #expect(!PostgresError("x", sqlState: "23505", isConnectionFailure: true).isPermanent)
        #expect(!PostgresError("x").isPermanent)
    }
}

/// The same against a real server: a CHECK constraint another application added refuses one
/// upload; the rest goes on; after the constraint is dropped, a retry goes through.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct PostgresRejectedUploadTests {
    @Test func aConstraintRefusesOneUploadAndSyncGoesOn() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let psql = try PostgresConnection(url)
        try psql.execute("ALTER TABLE notes ADD CONSTRAINT not_negative CHECK (done >= 0)")
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title, done) VALUES ('good', 'x', 1)")
        try db.execute("INSERT INTO notes(id, title, done) VALUES ('negative', 'x', -1)")
        try db.execute("INSERT INTO notes(id, title, done) VALUES ('later', 'x', 2)")
        try psql.execute("INSERT INTO notes(id, title) VALUES ('from-psql', 'y')")
        let sync = try tandem(["sync", db.path, "--backend", url])
        #expect(sync.status == 1)
        #expect(sync.stderr.contains("set aside") && sync.stderr.contains("not_negative") && sync.stderr.contains("'negative'"), "\(sync.stderr)")
        #expect(Set(try psql.execute("SELECT id FROM notes").compactMap { $0[0] ?? nil }) == ["good", "later", "from-psql"])
        #expect(try count(db, "SELECT count(*) FROM notes WHERE id = 'from-psql'") == 1)
        let status = try tandem(["status", db.path, "--json"])
        #expect(status.stdout.contains(#""rejected_uploads":1"#), "\(status.stdout)")
        try psql.execute("ALTER TABLE notes DROP CONSTRAINT not_negative")
        #expect(try tandem(["crud", db.path, "--retry", "all"]).status == 0)
        #expect(try syncOnce(db, url))
        #expect(try psql.execute("SELECT done FROM notes WHERE id = 'negative'").first?.first == "-1")
        #expect(try db.uploadQueue.rejected().isEmpty)
    }
}
