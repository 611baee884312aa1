import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// What a fleet operator meets on a real PostgreSQL server: other applications' TRUNCATE and
/// columns, restores from a dump, setups that could never sync, and the change log's retention.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct PostgresFleetTests {
    /// `TRUNCATE` by another application reaches every client: each ends with exactly the
    /// server's rows, a row it had pending kept and uploaded.
    @Test func truncateByAnotherApplicationEmptiesEveryClient() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let dir = try TemporaryDirectory()
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema), b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        for i in 0..<20 { try a.execute("INSERT INTO notes(id, title) VALUES (?, 'x')", ["r\(i)"]) }
        for db in [a, b] { #expect(try syncOnce(db, url)) }
        #expect(try count(b, "SELECT count(*) FROM notes") == 20)
        try b.execute("INSERT INTO notes(id, title) VALUES ('pending', 'queued before the truncate')")
        let psql = try PostgresConnection(url)
        try psql.execute("TRUNCATE notes")
        try psql.execute("INSERT INTO notes(id, title) VALUES ('after', 'written after the truncate')")
        for db in [a, b, a] { #expect(try syncOnce(db, url)) }
        let server = Set(try psql.execute("SELECT id FROM notes").compactMap { $0[0] ?? nil })
        #expect(server == ["after", "pending"])
        for db in [a, b] {
            let ids = Set(try db.fetchAll("SELECT id FROM notes").compactMap { $0[0].stringValue })
            #expect(ids == server, "\(db.path) holds the server's rows")
        }
    }

    /// Columns the schema does not declare belong to other applications: a PUT (an insert of an
    /// existing id, `INSERT OR REPLACE`), a PATCH and a delete-and-insert never touch them.
    @Test func columnsTheSchemaDoesNotDeclareAreNeverTouched() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let psql = try PostgresConnection(url)
        try psql.execute("ALTER TABLE notes ADD COLUMN owner text, ADD COLUMN audited_at timestamptz NOT NULL DEFAULT now()")
        try psql.execute("INSERT INTO notes(id, title, owner) VALUES ('r', 'from psql', 'billing')")
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        #expect(try syncOnce(db, url))
        try db.execute("INSERT OR REPLACE INTO notes(id, title, done) VALUES ('r', 'replaced', 1)")
        #expect(try syncOnce(db, url))
        try db.execute("UPDATE notes SET score = 2.5 WHERE id = 'r'")
        try db.execute("INSERT INTO notes(id, title) VALUES ('new', 'from a client')")
        #expect(try syncOnce(db, url))
        let row = try psql.execute("SELECT title, done, score, owner, audited_at IS NOT NULL FROM notes WHERE id = 'r'").first ?? []
        #expect(row == ["replaced", "1", "2.5", "billing", "t"])
        #expect(try psql.execute("SELECT owner FROM notes WHERE id = 'new'").first?.first == .some(nil))
        // Another application changing only its own column sends nothing to clients.
        let backend = try PostgresBackend(conninfo: url)
        let cursor = try settledCursor(backend)
        try psql.execute("UPDATE notes SET owner = 'sales'")
        #expect(try backend.fetchChanges(after: cursor, limit: 10).changes.isEmpty)
    }

    /// A dump restored into another database (a migration, a managed-service move) keeps the
    /// server id, so clients accept it; their cursors belong to the old history, so each says
    /// so in its status and does a full sync, keeping its pending uploads.
    @Test func aServerRestoredFromADumpIsNoticed() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let dir = try TemporaryDirectory()
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        for i in 0..<5 { try a.execute("INSERT INTO notes(id, title) VALUES (?, 'before the move')", ["r\(i)"]) }
        #expect(try syncOnce(a, url))
        let moved = try TestPostgres.restoredCopy(of: url)
        let psql = try PostgresConnection(moved)
        try psql.execute("UPDATE notes SET title = 'changed on the new server' WHERE id = 'r0'")
        try psql.execute("DELETE FROM notes WHERE id = 'r1'")
        try a.execute("INSERT INTO notes(id, title) VALUES ('pending', 'written during the move')")
        let synced = try runTandem(["sync", a.path, "--backend", moved])
        #expect(synced.status == 0, "\(synced.stderr)")
        let status = try a.sync.status()
        #expect(status.lastFullSync?.reason.contains("history changed") == true, "\(String(describing: status.lastFullSync))")
        let local = try a.fetchAll("SELECT id, title FROM notes ORDER BY id").map { "\($0[0].stringValue ?? ""):\($0[1].stringValue ?? "")" }
        let server = try psql.execute("SELECT id, title FROM notes ORDER BY id").map { "\($0[0] ?? ""):\($0[1] ?? "")" }
        #expect(local == server)
        #expect(server.contains("pending:written during the move") && server.contains("r0:changed on the new server") && !server.contains { $0.hasPrefix("r1:") })
        // From then on the new server's changes arrive as usual.
        try psql.execute("UPDATE notes SET title = 'later' WHERE id = 'r2'")
        #expect(try syncOnce(a, moved))
        #expect(try a.fetchAll("SELECT title FROM notes WHERE id = 'r2'").first?[0] == .text("later"))
        #expect(try a.sync.status().lastFullSync == status.lastFullSync, "no second full sync")
    }

    /// Setup refuses, naming table and column and changing nothing, what could never sync.
    @Test func setupRefusesWhatCanNeverSync() throws {
        let dir = try TemporaryDirectory()
        let cases: [(schema: Schema, prepare: String?, expected: [String])] = [
            (Schema(tables: [TableSchema(name: "tandem_changes", columns: [.text("x")])]), nil, ["tandem_changes", "reserved"]),
            (Schema(tables: [TableSchema(name: "Tandem_Notes", columns: [.text("x")])]), nil, ["Tandem_Notes", "reserved"]),
            (notesSchema, "CREATE TABLE notes(id text, title text)", ["notes", "primary key"]),
            (notesSchema, "CREATE TABLE notes(id text, title text, PRIMARY KEY (id, title))", ["notes", "primary key"]),
            (notesSchema, "CREATE TABLE notes(id bigint PRIMARY KEY)", ["notes", "id column is bigint"]),
            (notesSchema, "CREATE TABLE notes(id text PRIMARY KEY, owner text NOT NULL)", ["notes", "owner", "NOT NULL"]),
            (notesSchema, "CREATE TABLE notes(id text PRIMARY KEY, title text NOT NULL)", ["notes", "title", "NOT NULL"]),
            (notesSchema, "CREATE TABLE notes(id text PRIMARY KEY, done text)", ["notes", "done", "text"]),
        ]
        for (index, item) in cases.enumerated() {
            let url = try TestPostgres.emptyDatabase()
            if let prepare = item.prepare { try PostgresConnection(url).execute(prepare) }
            let result = try runTandem(["backend", "setup", url, "--schema", try dir.schemaFile(item.schema, name: "s\(index).json")])
            #expect(result.status == 1, "case \(index): \(result.stdout)")
            for word in item.expected { #expect(result.stderr.contains(word), "case \(index): \(result.stderr)") }
            #expect(try PostgresConnection(url).execute("SELECT to_regclass('tandem_meta') IS NULL").first?.first == "t", "case \(index) changed nothing")
        }
        // A NOT NULL column with a default, which uploads leave to it, is fine.
        let url = try TestPostgres.emptyDatabase()
        try PostgresConnection(url).execute("CREATE TABLE notes(id text PRIMARY KEY, created timestamptz NOT NULL DEFAULT now())")
        #expect(try runTandem(["backend", "setup", url, "--schema", try dir.schemaFile()]).status == 0)
    }

    /// The change log stays bounded: compaction deletes what every client has applied; a client
    /// away for longer than the retention period gets a full sync that keeps its pending uploads.
    @Test func theChangeLogIsCompactedAndAClientBehindItDoesAFullSync() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let psql = try PostgresConnection(url)
        let dir = try TemporaryDirectory()
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema), b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        for i in 0..<10 { try a.execute("INSERT INTO notes(id, title, done) VALUES (?, 'x', 0)", ["r\(i)"]) }
        for db in [a, b] { #expect(try syncOnce(db, url)) }
        try b.execute("INSERT INTO notes(id, title) VALUES ('from-b', 'pending while away')")
        try b.execute("DELETE FROM notes WHERE id = 'r9'")
        for round in 1...20 { try psql.execute("UPDATE notes SET done = $1", [String(round)]) }
        try psql.execute("DELETE FROM notes WHERE id = 'r0'")
        #expect(try syncOnce(a, url))
        // B was away longer than the retention period (last seen 8 days ago): only A's cursor counts.
        try psql.execute("UPDATE tandem_clients SET seen_at = now() - interval '8 days' WHERE client_id = $1", [try b.clientID()])
        let before = Int(try psql.execute("SELECT count(*) FROM tandem_changes").first?.first.flatMap { $0 } ?? "") ?? 0
        #expect(before >= 200)
        // The horizon also waits for the oldest transaction running in the cluster (other tests').
        try waitUntil(timeout: 30, "the log to be compacted") {
            #expect(try syncOnce(a, url))
            let compacted = try runTandem(["backend", "compact", url])
            #expect(compacted.status == 0 && compacted.stdout.contains("deleted"), "\(compacted.stdout) \(compacted.stderr)")
            return try psql.execute("SELECT count(*) FROM tandem_changes").first?.first == "0"
        }
        #expect(try syncOnce(b, url))
        #expect(try b.sync.status().lastFullSync?.reason.contains("compacted") == true)
        for db in [a, b] { #expect(try syncOnce(db, url)) }
        let server = try psql.execute("SELECT id, done FROM notes ORDER BY id").map { "\($0[0] ?? ""):\($0[1] ?? "null")" }
        #expect(server.contains("from-b:null") && !server.contains { $0.hasPrefix("r0:") || $0.hasPrefix("r9:") } && server.contains("r1:20"))
        for db in [a, b] {
            let local = try db.fetchAll("SELECT id, done FROM notes ORDER BY id").map { "\($0[0].stringValue ?? ""):\($0[1].int64Value.map(String.init) ?? "null")" }
            #expect(local == server, "\(db.path)")
        }
    }
}
