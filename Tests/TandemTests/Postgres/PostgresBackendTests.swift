import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres
@testable import TandemCLI

/// The PostgreSQL backend against a real server (`Tools/test` starts a throwaway cluster).
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct PostgresBackendTests {
    /// A transaction that commits after later ones is never skipped, and holds back only its
    /// own changes: the later transaction's change arrives while it is open, its own when it commits.
    @Test func aLateCommitIsNeverSkipped() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let backend = try PostgresBackend(conninfo: url)
        let origin = try settledCursor(backend)
        let late = try PostgresConnection(url)
        try late.execute("BEGIN")
        try late.execute("INSERT INTO notes(id, title) VALUES ('late', 'committed last')")
        let early = try PostgresConnection(url)
        try early.execute("INSERT INTO notes(id, title) VALUES ('early', 'committed first')")
        let before = try backend.fetchChanges(after: origin, limit: 100)
        #expect(before.changes.map(\.rowID) == ["early"], "the committed change arrives while an older transaction is open")
        try late.execute("COMMIT")
        let after = try backend.fetchChanges(after: before.nextCursor, limit: 100)
        #expect(after.changes.map(\.rowID) == ["late"])
        #expect(try backend.fetchChanges(after: after.nextCursor, limit: 100).changes.isEmpty)
    }

    /// The backend's connections plan by index and never compile a statement: with
    /// `enable_seqscan = off`, a scan of a small table is priced above `jit_above_cost`, and
    /// compiling one such statement took 200 ms on every download pass that compacted. Checked
    /// on the first connection and on one made again after the server dropped it.
    @Test func backendConnectionsDoNotCompileStatements() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let backend = try PostgresBackend(conninfo: url)
        func settings() throws -> [String?] {
            try backend.withConnection { db in
                try ["jit", "enable_seqscan"].map { try db.execute("SHOW \($0)").first?.first ?? nil }
            }
        }
        #expect(try settings() == ["off", "off"])
        let admin = try PostgresConnection(url)
        let pid = try backend.withConnection { try $0.execute("SELECT pg_backend_pid()").first?.first ?? nil }
        try admin.execute("SELECT pg_terminate_backend($1::int)", [pid])
        #expect(throws: PostgresError.self) { try settings() }  // the lost connection, found lost
        #expect(try settings() == ["off", "off"])
    }

    /// A client that syncs with one server refuses another, whether set up or not (and creates
    /// nothing in the one that is not), and goes on with its own: the binding is checked on the
    /// connection the backend opens.
    @Test func aClientRefusesAnotherServer() throws {
        let (first, other, empty) = (try TestPostgres.database(schema: notesSchema), try TestPostgres.database(schema: notesSchema), try TestPostgres.emptyDatabase())
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('n1', 'kept')")
        let synced = try tandem(["sync", db.path, "--backend", first])
        #expect(synced.status == 0, "\(synced.stderr)")
        let refused = try tandem(["sync", db.path, "--backend", other])
        #expect(refused.status == 1 && refused.stderr.contains("syncs with another backend") && refused.stderr.contains("cannot switch to"), "\(refused.stderr)")
        let missing = try tandem(["sync", db.path, "--backend", empty])
        #expect(missing.stderr.contains("which does not exist (nothing was created)"), "\(missing.stderr)")
        #expect(try PostgresConnection(empty).execute("SELECT to_regclass('tandem_meta') IS NULL").first?.first == "t")
        #expect(try PostgresConnection(other).execute("SELECT count(*) FROM notes").first?.first == "0")
        try db.execute("UPDATE notes SET title = 'again' WHERE id = 'n1'")
        #expect(try syncOnce(db, first))
        #expect(try PostgresConnection(first).execute("SELECT title FROM notes WHERE id = 'n1'").first?.first == "again")
    }

    /// An upload batch writes one marker, whatever its number of transactions; its retry
    /// writes none, and applies nothing again.
    @Test func aBatchWritesOneMarker() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let backend = try PostgresBackend(conninfo: url)
        let admin = try PostgresConnection(url)
        let transactions = (Int64(1)...500).map { id in
            CrudTransaction(
                transactionID: id,
                entries: [CrudEntry(id: id, transactionID: id, op: .put, table: "notes", rowID: "n\(id)", data: ["title": .string("\(id)")])])
        }
        func count(_ sql: String) throws -> String? { try admin.execute(sql).first?.first ?? nil }
        try backend.upload(Array(transactions[0..<300]), clientID: "c", epoch: 1)
        try backend.upload(Array(transactions[300...]), clientID: "c", epoch: 1)
        #expect(try count("SELECT count(*) FROM tandem_uploads") == "2")
        let changes = try count("SELECT count(*) FROM tandem_changes")
        try backend.upload(Array(transactions[250..<400]), clientID: "c", epoch: 1)  // a retry
        #expect(try count("SELECT count(*) FROM tandem_uploads") == "2")
        #expect(try count("SELECT count(*) FROM tandem_changes") == changes)
        // A marker's ids and digests (4–6 KB of digests here) are stored uncompressed:
        // compressing them took half of a large batch's marker time.
        #expect(
            try count(
                "SELECT count(*) FROM tandem_uploads WHERE pg_column_size(digests) > 2000 AND pg_column_compression(digests) IS NULL AND pg_column_compression(tx_ids) IS NULL"
            ) == "2")
    }

    /// Rows written in PostgreSQL by another application reach a client; a value the server's
    /// column cannot take is a retained, typed upload error naming table, column and row.
    @Test func otherApplicationsReachClientsAndBadValuesAreRejected() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try PostgresConnection(url).execute("INSERT INTO notes(id, title, done, score) VALUES ('psql', 'from psql', 1, 2.0)")
        let synced = try tandem(["sync", db.path, "--backend", url])
        #expect(synced.status == 0, "\(synced.stderr)")
        let row = try #require(try db.fetchAll("SELECT title, done, score FROM notes WHERE id = 'psql'").first)
        #expect(row.values == [.text("from psql"), .integer(1), .real(2.0)])
        // Text in the integer column, written while the column was declared text: the view
        // refuses text there now, the upload still carries it.
        let textDone = Schema(tables: [
            TableSchema(
                name: "notes", columns: [.text("title"), .text("done"), .real("score")],
                indexes: notesSchema.tables[0].indexes)
        ])
        try SharedDatabase(path: db.path, schema: textDone).execute("INSERT INTO notes(id, title, done) VALUES ('bad', 'x', 'not a number')")
        _ = try SharedDatabase(path: db.path, schema: notesSchema)
        let rejected = try tandem(["sync", db.path, "--backend", url])
        #expect(rejected.status == 1)
        #expect(rejected.stderr.contains("notes row 'bad'") && rejected.stderr.contains("column done"), "\(rejected.stderr)")
        #expect(try db.uploadQueue.pendingCount() == 0, "the refused write no longer blocks the queue")
        #expect(try db.uploadQueue.rejected().flatMap(\.transaction.entries).map(\.rowID) == ["bad"], "the refused write is kept, set aside")
    }

    /// Three hosts (client databases), each with its own `tandem app`, converge through
    /// PostgreSQL, values intact.
    @Test func threeHostsConvergeThroughPostgres() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let dir = try TemporaryDirectory()
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema), b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        let c = try SharedDatabase(path: dir.path("c.db"), schema: notesSchema)
        var apps: [Spawned] = []
        for db in [a, b, c] {
            let app = try Spawned(["app", db.path, "--backend", url, "--json"])
            try app.waitForLine("became_owner") { $0.contains("became_owner") }
            apps.append(app)
        }
        try a.execute("INSERT INTO notes(id, title, done, score) VALUES ('x', ?, ?, ?)", ["ünïcode \"q\"", Int64.min, -0.0])
        try waitUntil("A's row on B") { try count(b, "SELECT count(*) FROM notes WHERE id = 'x'") == 1 }
        let onB = try #require(try b.fetchAll("SELECT title, done, score FROM notes").first)
        #expect(onB[0] == .text("ünïcode \"q\"") && onB[1] == .integer(.min))
        #expect(onB[2].doubleValue?.sign == .minus, "-0.0 keeps its sign through PostgreSQL")
        try c.execute("INSERT INTO notes(id, title) VALUES ('from-c', 'third host')")
        for db in [a, b] { try waitUntil("C's row everywhere") { try count(db, "SELECT count(*) FROM notes WHERE id = 'from-c'") == 1 } }
        try b.execute("DELETE FROM notes WHERE id = 'x'")
        for db in [a, c] { try waitUntil("B's delete everywhere") { try count(db, "SELECT count(*) FROM notes WHERE id = 'x'") == 0 } }
        for app in apps { app.signal(SIGTERM); #expect(try app.wait() == 0) }
    }

    /// While its backlog uploads, an owner leaves the answers to its own uploads for later
    /// (each download stops its uploads for its length), never anyone else's change; once its
    /// queue is empty it holds the server's state of its own rows too, here changed by a
    /// server trigger on the way in.
    @Test func anOwnersOwnAnswersWaitForItsBacklogOthersChangesDoNot() throws {
        let url = try TestPostgres.database(schema: StressWriterCommand.schema)
        let admin = try PostgresConnection(url)
        try admin.execute(
            "CREATE FUNCTION mark() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.payload := 'server:' || coalesce(NEW.payload, ''); RETURN NEW; END $$")
        try admin.execute("CREATE TRIGGER mark BEFORE INSERT ON stress FOR EACH ROW WHEN (NEW.writer = 0) EXECUTE FUNCTION mark()")
        let dir = try TemporaryDirectory()
        let a = try makeStressDatabase(dir.path("a.db"))
        let total = 20_000
        let written = try runTandem(["stress-writer", a.path, "--writer", "0", "--transactions", "\(total)"], timeout: 120)
        #expect(written.status == 0, "\(written.stderr)")
        let app = try Spawned(["app", a.path, "--backend", url, "--json"])
        try app.waitForLine("a first upload") { $0.contains("\"uploaded\"") }
        try admin.execute("INSERT INTO stress(id, writer) VALUES ('foreign', 99)")
        try waitUntil(timeout: 30, "the other application's row on A") { try count(a, "SELECT count(*) FROM stress WHERE id = 'foreign'") == 1 }
        #expect(try a.uploadQueue.pendingCount() > 0, "it arrived while the backlog uploaded")
        try waitUntil(timeout: 120, "A's queue empty and its rows as the server's trigger left them") {
            try a.uploadQueue.pendingCount() == 0 && count(a, "SELECT count(*) FROM stress WHERE payload LIKE 'server:%'") == total
        }
        app.signal(SIGTERM)
        #expect(try app.wait() == 0)
    }

    /// An owner that has never synced and starts with a backlog uploads all of it before its
    /// first download, which then brings what another application wrote before (PowerSync's
    /// order: no new checkpoint while the upload queue holds changes); the backlog outlasts
    /// two passes' 0.2 s. (Another application's change while it uploads comes at once:
    /// ``anOwnersOwnAnswersWaitForItsBacklogOthersChangesDoNot()``.)
    @Test func anOwnerUploadsTheBacklogItBeganWithBeforeItsFirstDownload() throws {
        let dir = try TemporaryDirectory()
        let url = try TestPostgres.database(schema: StressWriterCommand.schema)
        try PostgresConnection(url).execute("INSERT INTO stress(id, writer) VALUES ('from-b', 99)")
        let a = try makeStressDatabase(dir.path("a.db"))
        let queued = 20_000
        #expect(try runTandem(["stress-writer", a.path, "--writer", "1", "--transactions", String(queued)]).status == 0)
        let app = try Spawned(["app", a.path, "--backend", url, "--json"])
        try app.waitForLine(timeout: 60, "A's first download") { $0.contains("\"downloaded\"") }
        // Events in order: every upload before the first download.
        let events = app.output.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let firstDownload = try #require(events.firstIndex { ["downloaded", "full_sync"].contains($0["event"] as? String) })
        let uploads = events.enumerated().filter { $0.element["event"] as? String == "uploaded" }
        #expect(uploads.count > 1, "the backlog went up in more than one batch")
        #expect(uploads.allSatisfy { $0.offset < firstDownload }, "no upload after the first download: \(app.output)")
        #expect(uploads.reduce(0) { $0 + ($1.element["transactions"] as? Int ?? 0) } == queued)
        #expect(try count(a, "SELECT count(*) FROM stress WHERE id = 'from-b'") == 1, "the first download brought the other application's row")
        let uploadLines = app.lines.filter { $0.text.contains("\"uploaded\"") }
        let span = Double((uploadLines.last?.at ?? 0) - (uploadLines.first?.at ?? 0)) / 1e6
        #expect(span > 0.4, "the uploads outlasted two passes' 0.2 s (\(span) s)")
        app.signal(SIGTERM)
        #expect(try app.wait() == 0)
    }

    /// `tandem stress` through PostgreSQL with kill -9 of writers and owners passes every check:
    /// every transaction applied exactly once, both clients equal, nothing left queued.
    @Test func stressWithKillsPassesThroughPostgres() throws {
        let url = try TestPostgres.database(schema: StressWriterCommand.schema)
        let dir = try TemporaryDirectory()
        let stress = try runTandem(
            [
                "stress", dir.path("s.db"), "--writers", "4", "--transactions", "150", "--kill-every", "60",
                "--backend", url, "--json",
            ], timeout: 240)
        #expect(stress.status == 0, "\(stress.stdout.suffix(600)) \(stress.stderr.suffix(600))")
        #expect(stress.stdout.contains(#""failed_checks":[]"#), "\(stress.stdout.suffix(600))")
    }

    @Test func passwordsNeverShow() {
        #expect(ConnectionString.redacted("postgres://app:s3cret@db.example.com/app") == "postgres://app:***@db.example.com/app")
        #expect(ConnectionString.redacted("host=db user=app password=s3cret dbname=app") == "host=db user=app password=*** dbname=app")
    }

    /// Moving between backends: reset unbinds, refusing while uploads are pending unless told.
    @Test func resetUnbindsAndRefusesPendingUploads() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let server = "sqlite:" + dir.path("server.db")
        try db.execute("INSERT INTO notes(id, title) VALUES ('n', 'x')")
        #expect(try syncOnce(db, server))
        try db.execute("INSERT INTO notes(id, title) VALUES ('q', 'queued')")
        let refused = try tandem(["backend", "reset", db.path])
        #expect(refused.status == 1 && refused.stderr.contains("1 queued upload entry"), "\(refused.stderr)")
        #expect(try tandem(["backend", "reset", db.path, "--discard-pending"]).status == 0)
        #expect(try count(db, "SELECT count(*) FROM notes") == 0 && db.uploadQueue.pendingCount() == 0)
        let url = try TestPostgres.database(schema: notesSchema)
        #expect(try tandem(["sync", db.path, "--backend", url]).status == 0, "the next sync binds the new backend")
    }
}

/// A PostgreSQL server of the test's own, to restart under running clients.
final class PrivatePostgres {
    let directory: TemporaryDirectory
    let port = Int.random(in: 40_000...60_000)
    private let bin: String
    private let asPostgres: [String]

    init() throws {
        directory = try TemporaryDirectory()
        bin = (try FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")).sorted().last.map { "/usr/lib/postgresql/\($0)/bin" } ?? "/usr/bin"
        asPostgres = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : []
        if getuid() == 0 { _ = chown(directory.url.path, getpwnam("postgres").pointee.pw_uid, 0) }
        try run([bin + "/initdb", "-D", directory.path("data"), "-A", "trust", "-U", "tandem", "--no-sync"])
        try start()
    }

    var url: String { "postgresql://tandem@/postgres?host=\(directory.url.path)&port=\(port)" }

    func start() throws {
        try run([
            bin + "/pg_ctl", "-D", directory.path("data"), "-l", directory.path("log"), "-w",
            "-o", "-k \(directory.url.path) -p \(port) -c listen_addresses='' -c fsync=off", "start",
        ])
    }

    func stop() throws { try run([bin + "/pg_ctl", "-D", directory.path("data"), "-m", "fast", "-w", "stop"]) }

    /// A shell command that crashes the server (`-m immediate`: no shutdown checkpoint, so it
    /// recovers from its WAL) and starts it again with the same options.
    var crashRestartCommand: String {
        (asPostgres + [bin + "/pg_ctl", "-D", directory.path("data"), "-m", "immediate", "-w", "restart"]).map { "'\($0)'" }.joined(separator: " ")
    }

    private func run(_ command: [String]) throws {
        let all = asPostgres + command
        let process = try Spawned(executable: all[0], Array(all.dropFirst()))
        guard try process.wait(timeout: 60) == 0 else { throw TestFailure("\(command[0]) failed: \(process.stderr)") }
    }

    deinit { try? stop() }
}

@Suite(.enabled(if: TestPostgres.url != nil, "needs PostgreSQL (Tools/test installs it)"))
struct PostgresRestartTests {
    /// The server restarts while two clients sync: they report the lost connection, reconnect
    /// with backoff, re-read from their cursors, and converge on every row.
    @Test func clientsReconnectAndConvergeAfterARestart() throws {
        let server = try PrivatePostgres()
        try PostgresBackend.setup(conninfo: server.url, schema: notesSchema)
        let dir = try TemporaryDirectory()
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema), b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        var apps: [Spawned] = []
        for db in [a, b] {
            let app = try Spawned(["app", db.path, "--backend", server.url, "--json"])
            try app.waitForLine("became_owner") { $0.contains("became_owner") }
            apps.append(app)
        }
        try a.execute("INSERT INTO notes(id, title) VALUES ('before', 'restart')")
        try waitUntil("the first row on B") { try count(b, "SELECT count(*) FROM notes") == 1 }
        try server.stop()
        try a.execute("INSERT INTO notes(id, title) VALUES ('during', 'restart')")
        do {
            try waitUntil("A to report the lost server") { try a.sync.status().lastFailure?.kind == .backendUnavailable }
        } catch {
            throw TestFailure("\(error); status: \(try a.sync.status()); app output: \(apps[0].output.suffix(5)) stderr: \(apps[0].stderr.prefix(2000))")
        }
        try server.start()
        try a.execute("INSERT INTO notes(id, title) VALUES ('after', 'restart')")
        try waitUntil(timeout: 30, "every row on B") { try count(b, "SELECT count(*) FROM notes") == 3 }
        try waitUntil("A's queue to drain") { try a.uploadQueue.pendingCount() == 0 }
        for app in apps { app.signal(SIGTERM); #expect(try app.wait() == 0) }
    }
}

/// The cursor of a client that has applied everything the backend has now (after its full sync).
func settledCursor(_ backend: any SyncBackend) throws -> String {
    var cursor = "", more = true
    while more {
        let batch = try backend.fetchChanges(after: cursor, limit: 1000)
        cursor = batch.nextCursor
        more = batch.hasMore
    }
    return cursor
}
