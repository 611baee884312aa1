import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// The change log's retention never overtakes a running client: setup refuses a retention its
/// clients' reports cannot support, a shorter one stored before counts as the least, and an idle
/// client reports its position all the same.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct RetentionTests {
    static let schema = Schema(tables: [TableSchema(name: "notes", columns: [.text("title")])])

    @Test func setupRefusesARetentionShorterThanTheReportsSupport() throws {
        let url = try TestPostgres.emptyDatabase()
        let dir = try TemporaryDirectory()
        let schemaFile = dir.path("schema.json")
        try #"{"tables":[{"name":"notes","columns":[{"name":"title","type":"text"}]}]}"#.write(toFile: schemaFile, atomically: true, encoding: .utf8)
        for retention in ["1s", "0", "0.5", "599", "599s", "9m", "0.1h", "0d"] {
            let result = try runTandem(["backend", "setup", url, "--schema", schemaFile, "--retention", retention])
            #expect(result.status == 2 && result.stderr.contains("10m"), "--retention \(retention): \(result.status) \(result.stderr)")
        }
        #expect(try PostgresConnection(url).execute("SELECT to_regclass('tandem_meta') IS NULL").first?.first == "t", "nothing set up")
        #expect(throws: PostgresError.self) { try PostgresBackend.setup(conninfo: url, schema: Self.schema, retention: .seconds(1)) }
        #expect(throws: PostgresError.self) { try PostgresBackend.setup(conninfo: url, schema: Self.schema, retention: .zero) }
        for retention in ["10m", "600", "1h", "7d"] {
            let result = try runTandem(["backend", "setup", url, "--schema", schemaFile, "--retention", retention])
            #expect(result.status == 0, "--retention \(retention): \(result.stderr)")
        }
    }

    /// A retention of a second stored by an older setup: a client seen half a minute ago still
    /// holds the horizon, so compaction leaves it what it has yet to apply.
    @Test func aShorterRetentionStoredBeforeCountsAsTheLeast() throws {
        let url = try TestPostgres.database(schema: Self.schema)
        let psql = try PostgresConnection(url)
        let dir = try TemporaryDirectory()
        let a = try SharedDatabase(path: dir.path("a.db"), schema: Self.schema)
        #expect(try syncOnce(a, url))
        try psql.execute("INSERT INTO tandem_meta(key, value) VALUES ('retention_seconds', '1') ON CONFLICT (key) DO UPDATE SET value = '1'")
        try psql.execute("UPDATE tandem_clients SET seen_at = now() - interval '30 seconds'")
        for i in 0..<5 { try psql.execute("INSERT INTO notes(id, title) VALUES ($1, 'x')", ["n\(i)"]) }
        _ = try PostgresBackend(conninfo: url).compact()
        #expect(try syncOnce(a, url))
        #expect(try a.sync.status().lastFullSync?.reason.contains("compacted") != true, "a running client was sent into a full sync")
        #expect(try a.fetchAll("SELECT count(*) FROM notes").first?[0].int64Value == 5)
    }

    /// An idle client applies nothing, yet reports its position again once its last report is a
    /// heartbeat old, when a wait for changes ends.
    @Test func anIdleClientReportsItsPositionEveryHeartbeat() throws {
        let url = try TestPostgres.database(schema: Self.schema)
        let psql = try PostgresConnection(url)
        let backend = try PostgresBackend(conninfo: url)
        let cursor = try backend.fetchChanges(after: "", limit: 100).nextCursor
        try backend.acknowledge(cursor: cursor, clientID: "idle")
        try psql.execute("UPDATE tandem_clients SET seen_at = now() - interval '1 hour'")
        let seen = "SELECT (seen_at > now() - interval '1 minute')::text FROM tandem_clients WHERE client_id = 'idle'"
        backend.flushAcknowledgements(now: Date().addingTimeInterval(PostgresHistory.heartbeat / 2))
        #expect(try psql.execute(seen).first?.first == "false", "no report before a heartbeat")
        backend.flushAcknowledgements(now: Date().addingTimeInterval(PostgresHistory.heartbeat + 1))
        #expect(try psql.execute(seen).first?.first == "true", "reported again")
    }
}
