import Foundation
import Testing
@testable import Tandem

/// Errors match by code, print the same through `localizedDescription`, and sync failures are typed.
@Suite struct ErrorTests {
    @Test func resultCodesMatchInCatchClausesWithTheirExtendedCodes() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('x', 'a')")
        var matched = false
        do {
            try db.execute("INSERT INTO notes(id, title) VALUES ('x', 'b')")
        } catch ResultCode.busy {
            Issue.record("a constraint failure matched SQLITE_BUSY")
        } catch ResultCode.constraint {
            matched = true
        }
        #expect(matched)
        let recovery = SQLiteError(extendedCode: 261, message: "recovering")  // SQLITE_BUSY_RECOVERY
        #expect(recovery.isBusy && recovery.code == .busy)
        #expect(!SQLiteError(extendedCode: 6, message: "locked").isBusy, "SQLITE_LOCKED is not busy")
    }

    @Test func localizedDescriptionIsTheDescription() {
        let errors: [any Error] = [
            TandemError.readOnly(path: "/x/a.db"),
            SQLiteError(extendedCode: 19, message: "NOT NULL constraint failed: notes.title", sql: "INSERT …", path: "/x/a.db", arguments: [.text("secret")]),
            SystemError(call: "open(2)", path: "/x/a.db-notify", errno: EACCES),
        ]
        for error in errors {
            #expect(error.localizedDescription == "\(error)")
            #expect(!error.localizedDescription.contains("could not be completed"))
        }
        #expect(!"\(errors[1])".contains("secret"), "arguments are kept, not printed")
        #expect(!TandemError.notInitialized(path: "/x/a.db").description.contains("tandem "), "no CLI command in library errors")
    }

    @Test func syncFailuresAreClassified() {
        let db = "/x/a.db"
        #expect(SyncFailure(TandemError.staleEpoch(held: 1, current: 2), databasePath: db).kind == .refusedEpoch)
        #expect(SyncFailure(SQLiteError(extendedCode: 5, message: "database is locked", path: "/x/server.db"), databasePath: db).kind == .backendUnavailable)
        #expect(SyncFailure(SQLiteError(extendedCode: 13, message: "database or disk is full", path: db), databasePath: db).kind == .localDatabase)
        #expect(SyncFailure(TandemError.invalidJSON("not valid JSON: {"), databasePath: db).kind == .badData)
        let rejected = SyncFailure(TandemError.uploadRejected(table: "notes", rowID: "n1", reason: "done: 'x' is not an integer"), databasePath: db)
        #expect(rejected.kind == .rejectedUpload && rejected.table == "notes" && rejected.rowID == "n1")
    }

    /// A write transaction started inside another on the same thread is a misuse of the API,
    /// said as one (it would otherwise wait for its own lock), and the outer one goes on.
    @Test func aNestedWriteIsAMisuse() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("n.db"), schema: notesSchema)
        try db.write { tx in
            try tx.execute("INSERT INTO notes(id, title) VALUES ('outer', 'kept')")
            #expect(throws: TandemError.misuse("a write transaction was started inside another one on the same thread (\(db.path)); run the statements in the outer transaction")) {
                try db.write { try $0.execute("INSERT INTO notes(id, title) VALUES ('inner', 'never')") }
            }
        }
        #expect(try db.fetchAll("SELECT id FROM notes").map { $0[0] } == [.text("outer")])
    }
}
