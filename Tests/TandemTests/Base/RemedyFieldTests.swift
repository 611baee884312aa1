import CSQLite
import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI
@testable import TandemPostgres

/// A remedy is a field (``Remediable``): real failures carry it, the sync status keeps it, and
/// the command line says it as a command however the message is worded.
@Suite struct RemedyFieldTests {
    @Test func realFailuresCarryTheirRemedy() async throws {
        let dir = try TemporaryDirectory()
        // A file with no schema, opened without one; and checked.
        let plain = dir.path("plain.db")
        let connection = try Connection(path: plain, readOnly: false, busyTimeoutMilliseconds: 100, rules: nil)
        try connection.execute("CREATE TABLE t(a)")
        connection.close()
        #expect(throws: TandemError.notInitialized(path: dir.path("missing.db"))) { try SharedDatabase(path: dir.path("missing.db")) }
        #expect(TandemError.notInitialized(path: plain).remedy == .storeSchema)
        let findings = try SharedDatabase.check(path: plain)
        #expect(findings.map(\.remedy) == [.storeSchema], "\(findings)")

        // A busy database, whatever the busy code.
        for code in [SQLITE_BUSY, SQLITE_BUSY | (1 << 8), SQLITE_BUSY | (2 << 8), SQLITE_LOCKED] {
            #expect(SQLiteError(extendedCode: code, message: "busy").remedy == .longerBusyTimeout)
        }
        #expect(SQLiteError(extendedCode: SQLITE_CONSTRAINT, message: "no").remedy == nil)

        // A refused upload, set aside: the event and the stored status both say what to do.
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('bad', 'x')")
        let session = try db.sync.start(with: RefusingBackend())
        var failure: SyncFailure?
        for await event in session.events {
            if case .error(let f) = event {
                failure = f
                break
            }
        }
        #expect(failure?.remedy == .resolveRejectedUpload, "\(String(describing: failure))")

        // A reset while a process owns sync.
        let other = try SharedDatabase(path: db.path)
        let refusal = #expect(throws: TandemError.self) { try other.sync.disconnectAndClear() }
        #expect(refusal?.remedy == .stopSyncOwner, "\(String(describing: refusal))")
        session.stop()
        // The status keeps a failure's remedy (as JSON, in the file).
        var stored = SyncFailure(kind: .other, message: "m", remedy: .setUpServer)
        stored = try JSONDecoder().decode(SyncFailure.self, from: JSONEncoder().encode(stored))
        #expect(stored.remedy == .setUpServer)
        let older = try JSONDecoder().decode(SyncFailure.self, from: Data(#"{"kind":"other","message":"m"}"#.utf8))
        #expect(older.remedy == nil, "a status written before remedies were kept reads")
        // A remedy a newer version wrote reads as none; the rest of the status is kept.
        var written = SyncStatus()
        written.hasSynced = true
        written.lastFailure = SyncFailure(kind: .other, message: "m", remedy: .setUpServer)
        let newer = String(decoding: try SyncStatus.encoder.encode(written), as: UTF8.self).replacingOccurrences(of: "setUpServer", with: "someFutureRemedy")
        #expect(newer.contains("someFutureRemedy"))
        let status = try SyncStatus.decoder.decode(SyncStatus.self, from: Data(newer.utf8))
        #expect(status.hasSynced && status.lastFailure?.message == "m" && status.lastFailure?.remedy == nil)
    }

    @Test(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL")) func aServerNotSetUpSaysSoAsAField() throws {
        let error = #expect(throws: PostgresError.self) { try PostgresAudit.check(conninfo: try TestPostgres.emptyDatabase()) }
        #expect(error?.remedy == .setUpServer)
        #expect(error.map(CommandHints.say)?.contains("`tandem backend setup`") == true)
    }

    @Test func theCommandLineSaysTheRemedyHoweverAMessageIsWorded() {
        for remedy in Remedy.allCases {
            let command = CommandHints.commandTerms(remedy)
            // Said in the API's terms: the command takes its place.
            #expect(CommandHints.say("do this: \(remedy.apiTerms).", remedy: remedy) == "do this: \(command).")
            // Reworded without it, or with no hint at all: the command is added, once.
            #expect(CommandHints.say("it failed", remedy: remedy) == "it failed (\(command))")
            #expect(CommandHints.say("it failed (\(command))", remedy: remedy) == "it failed (\(command))")
            #expect(CommandHints.say(PostgresError("reworded", remedy: remedy)) == "PostgreSQL: reworded (\(command))")
        }
        #expect(CommandHints.say("nothing to do", remedy: nil) == "nothing to do")
        #expect(CommandHints.say("", remedy: .stopSyncOwner) == CommandHints.commandTerms(.stopSyncOwner))
        // An error with its remedy as a field: its text is not searched, so data it quotes stays.
        let quoting = PostgresError("the row's value 'checkLayout()' was refused", remedy: .setUpServer)
        #expect(CommandHints.say(quoting) == "PostgreSQL: the row's value 'checkLayout()' was refused (`tandem backend setup`)")
        #expect(CommandHints.say(TandemError.notInitialized(path: "/x.db")).contains("tandem init DB --schema FILE"))
    }
}
