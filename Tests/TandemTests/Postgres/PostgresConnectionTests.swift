import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// Connection strings in every spelling a user writes, and apps whose server is not there.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct PostgresConnectionTests {
    /// The test server's socket directory and port, for spellings of its connection string.
    private static var server: (host: String, port: String)? {
        guard let url = TestPostgres.url, let items = URLComponents(string: url)?.queryItems,
            let host = items.first(where: { $0.name == "host" })?.value, let port = items.first(where: { $0.name == "port" })?.value
        else { return nil }
        return (host, port)
    }

    /// No password shows in any output, status field or recorded name, whatever the spelling:
    /// URLs in any letter case, a scheme typo, a raw `@` or space in the password, no user name,
    /// a `password=` parameter, percent-encoding, libpq `key=value` strings (taken as backends),
    /// reachable servers and unreachable ones, through `sync`, `app`, `status` and `backend setup`.
    @Test func passwordsNeverShowInAnySpelling() throws {
        let (host, port) = try #require(PostgresConnectionTests.server)
        let url = try TestPostgres.database(schema: notesSchema)
        let db = try #require(URLComponents(string: url)?.path.dropFirst()).description
        let dir = try TemporaryDirectory()
        let schemaFile = try dir.schemaFile()
        // Each secret's distinctive parts; none may show anywhere.
        let q = "host=\(host)&port=\(port)"
        let spellings: [(text: String, parts: [String], connects: Bool)] = [
            ("host=\(host) port=\(port) dbname=\(db) user=tandem password=Qx7Secret1", ["Qx7Secret1"], true),
            ("host=\(host) port=\(port) dbname=\(db) user=tandem password='Qx7 Secret2'", ["Qx7 Secret2", "Secret2"], true),
            ("POSTGRES://tandem:Qx7Secret3@/\(db)?\(q)", ["Qx7Secret3"], true),
            ("PostgreSQL://tandem:Qx7Secret4@/\(db)?\(q)", ["Qx7Secret4"], true),
            ("postgres://tandem:Qx7@Secret5@/\(db)?\(q)", ["Qx7", "Secret5"], true),
            ("postgres://tandem:Qx7 Secret6@/\(db)?\(q)", ["Qx7", "Secret6"], true),
            ("postgres://tandem@/\(db)?\(q)&password=Qx7Secret7", ["Qx7Secret7"], true),
            ("postgres://tandem:Qx7%40Secret8@/\(db)?\(q)", ["Qx7", "Secret8"], true),
            ("postgres://:Qx7Secret9@/\(db)?\(q)", ["Qx7Secret9"], false),
            ("postgress://tandem:Qx7Secret10@db.example.com/app", ["Qx7Secret10"], false),
            ("postgres://tandem:Qx7Secret11@127.0.0.1:1/app", ["Qx7Secret11"], false),
            ("host=/nonexistent/socket/dir user=tandem password=Qx7Secret12", ["Qx7Secret12"], false),
            ("host=\(host) port=\(port) password=Qx7Secret13 dbname", ["Qx7Secret13"], false),
            ("postgres://tandem:Qx7Secret14@/\(db)?\(q)&sslmode=bogus", ["Qx7Secret14"], false),
        ]
        for (index, spelling) in spellings.enumerated() {
            let client = dir.path("c\(index).db")
            _ = try SharedDatabase(path: client, schema: notesSchema)
            var seen: [String] = []
            let sync = try tandem(["sync", client, "--backend", spelling.text])
            #expect((sync.status == 0) == spelling.connects, "\(index): \(sync.stderr)")
            seen += [sync.stdout, sync.stderr]
            let setup = try tandem(["backend", "setup", spelling.text, "--schema", schemaFile])
            seen += [setup.stdout, setup.stderr]
            if spelling.connects || spelling.text.hasPrefix("postgres://tandem:Qx7Secret11") {
                let app = try Spawned(["app", client, "--backend", spelling.text, "--json"])
                try waitUntil("app \(index) to own sync") { try tandem(["status", client, "--json"]).stdout.contains("\"owner_pid\":\(app.pid)") }
                app.signal(SIGTERM)
                #expect(try app.wait() == 0)
                seen += app.output + [app.stderr]
            }
            seen.append(try tandem(["status", client, "--json"]).stdout)
            seen += try sqlite(client, "SELECT value FROM ps_kv")
            for part in spelling.parts {
                for text in seen { #expect(!text.contains(part), "spelling \(index) shows '\(part)': \(text.prefix(400))") }
            }
        }
    }

    /// An app starts, writes locally and stays up while its server is down, says so in its
    /// status, and syncs once the server comes; a stand-by waits as usual; `tandem sync` records
    /// its failure in the status too.
    @Test func appsStartAndRunWithoutTheServer() throws {
        let server = try PrivatePostgres()
        try PostgresBackend.setup(conninfo: server.url, schema: notesSchema)
        try server.stop()
        let dir = try TemporaryDirectory()
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let failed = try tandem(["sync", a.path, "--backend", server.url])
        #expect(failed.status == 1)
        #expect(try a.sync.status().lastFailure?.kind == .backendUnavailable, "tandem sync records its failure")
        let owner = try Spawned(["app", a.path, "--backend", server.url, "--json"])
        try owner.waitForLine("became_owner") { $0.contains("became_owner") }
        let standBy = try Spawned(["app", a.path, "--backend", server.url, "--json"])
        try waitUntil("the status to say why") {
            let failure = try a.sync.status().lastFailure
            return failure?.kind == .backendUnavailable && failure?.message.contains("cannot connect") == true
        }
        try a.execute("INSERT INTO notes(id, title) VALUES ('offline', 'written while the server was down')")
        #expect(owner.isRunning && standBy.isRunning)
        // The status says how long the row has waited for upload, and that count grows.
        try waitUntil("the upload lag in the status") { try a.sync.status().uploadLag > .milliseconds(300) }
        let status = try tandem(["status", a.path, "--json"]).stdout
        #expect(status.contains(#""pending_uploads":1"#) && !status.contains(#""upload_lag_seconds":"0.000""#), "\(status)")
        try server.start()
        try waitUntil(timeout: 30, "the row on the server") {
            (try? PostgresConnection(server.url).execute("SELECT title FROM notes WHERE id = 'offline'").first?.first) == "written while the server was down"
        }
        try waitUntil("the status to clear") { try a.sync.status().lastFailure == nil }
        try waitUntil("the upload lag to end") { try a.sync.status().uploadLag == .zero }
        for app in [owner, standBy] { app.signal(SIGTERM); #expect(try app.wait() == 0) }
    }
}
