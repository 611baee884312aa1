import Foundation
import Synchronization
import Testing
@testable import Tandem
@testable import TandemCLI

/// Sync through the app's own API: the reference API server (Tools/example/api/api_server.py) as
/// a real process, the curl connector program (Tools/example/api/connector.sh) run by `tandem`,
/// the Swift connector (`tandem-api-example`, URLSession), and connector programs that misbehave.
@Suite struct ConnectorTests {
    static let example = packageRoot.appendingPathComponent("Tools/example/api")

    /// The reference API on a free port, with its own SQLite file.
    final class API {
        let process: Spawned
        let url: String

        init(in dir: TemporaryDirectory) throws {
            process = try Spawned(executable: "/usr/bin/python3", [ConnectorTests.example.appendingPathComponent("api_server.py").path, dir.path("api.db")])
            let line = try process.waitForLine(timeout: 30, "the API to listen") { $0.hasPrefix("listening on ") }
            url = "http://127.0.0.1:" + line.text.dropFirst("listening on ".count)
        }

        var connector: String { "exec:" + ConnectorTests.example.appendingPathComponent("connector.sh").path + " " + url }

        func post(_ path: String, _ json: String) throws -> String {
            let curl = try Spawned(executable: "/usr/bin/curl", ["-sS", "-X", "POST", "--data-binary", json, url + path])
            _ = try curl.wait(timeout: 30)
            return curl.output.joined(separator: "\n")
        }

        func stats() throws -> [String: Int] {
            let curl = try Spawned(executable: "/usr/bin/curl", ["-sS", url + "/stats"])
            _ = try curl.wait(timeout: 30)
            return (try? JSONSerialization.jsonObject(with: Data(curl.output.joined().utf8))) as? [String: Int] ?? [:]
        }

        deinit { process.signal(SIGKILL) }
    }

    /// A connector program written to `path` with `text`, as an `exec:` connector that runs it
    /// with `/bin/sh`: a script executed directly right after it is written can fail with
    /// ETXTBSY while another thread of this test process spawns a child that still holds the
    /// written file open.
    static func program(_ text: String, at path: String) throws -> String {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return "exec:/bin/sh " + path
    }

    /// Every row of `items`, each value spelled exactly (a real by its bits).
    static func exactRows(_ path: String) throws -> [String] {
        let db = try SharedDatabase(path: path)
        defer { db.close() }
        return try db.fetchAll("SELECT id, title, n, r, Zed FROM items ORDER BY id").map { row in
            row.values.map { value -> String in
                switch value {
                case .real(let d): return "r\(d.bitPattern)"
                case .text(let t): return "t" + t.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: ".")
                default: return "\(value)"
                }
            }.joined(separator: "|")
        }
    }

    /// Generated rows with the data promise's adversarial values go up through the connector
    /// program and come down to another client bit for bit.
    @Test func adversarialValuesRoundTripThroughTheAPI() throws {
        let dir = try TemporaryDirectory()
        let api = try API(in: dir)
        let a = dir.path("a.db"), b = dir.path("b.db")
        let dbA = try SharedDatabase(path: a, schema: VerifyTests.schema)
        for seed: UInt64 in [21, 22] { try VerifyTests.writeGeneratedRows(dbA, seed: seed, count: 120) }
        try dbA.execute("UPDATE items SET title = 'patched' || char(0) WHERE id = '21-5'")
        try dbA.execute("DELETE FROM items WHERE id = '21-6'")
        dbA.close()
        try SharedDatabase(path: b, schema: VerifyTests.schema).close()
        for path in [a, b] {
            let sync = try tandem(["sync", path, "--connector", api.connector])
            #expect(sync.status == 0, "\(sync.stderr)")
        }
        let rows = try Self.exactRows(a)
        #expect(rows.count == 239)
        #expect(try Self.exactRows(b) == rows)
        #expect(try api.stats()["most_applications"] == 1)
    }

    /// The retry contract against a running app: 500s and a connection dropped after the API
    /// committed are retried (applied once), a slow answer past the timeout is abandoned and
    /// retried, 409 and 422 set the transaction aside with the API's reason while the rest goes
    /// on, an owner killed mid-batch is replaced with nothing applied twice, and an owner whose
    /// epoch the API has seen bettered steps down and comes back above it.
    @Test func theRetryContractHolds() throws {
        let dir = try TemporaryDirectory()
        let api = try API(in: dir)
        let a = dir.path("a.db")
        let db = try SharedDatabase(path: a, schema: VerifyTests.schema)
        defer { db.close() }
        let environment = ["TANDEM_CONNECTOR_POLL": "200ms", "TANDEM_CONNECTOR_TIMEOUT": "2s"]
        var app = try Spawned(["app", a, "--connector", api.connector, "--json"], environment: environment)
        defer { app.signal(SIGKILL) }
        try app.waitForLine(timeout: 30, "ownership") { $0.contains("became_owner") }
        func write(_ id: String, _ title: String = "x") throws { try db.execute("INSERT INTO items(id, title) VALUES (?, ?)", [id, title]) }
        func waitUploaded() throws { try waitUntil(timeout: 60, "the queue to drain") { try db.uploadQueue.pendingCount() == 0 } }

        // While the API keeps failing, the status says why and when the next try is due.
        _ = try api.post("/faults", #"{"fail":1000}"#)
        try write("after-500s")
        try waitUntil(timeout: 30, "the status to show the failure and the next try") {
            let status = try tandem(["status", a, "--json"]).stdout
            return status.contains("HTTP 500") && !status.contains(#""next_retry_at":null"#)
        }
        #expect(try tandem(["status", a]).stdout.contains("(next try at "))
        _ = try api.post("/faults", #"{"fail":0}"#)
        try waitUploaded()
        #expect(app.output.contains { $0.contains(#""event":"error""#) && $0.contains("HTTP 500") }, "\(app.output.suffix(5))")

        _ = try api.post("/faults", #"{"drop_after_commit":1}"#)
        try write("dropped-answer")
        try waitUploaded()

        _ = try api.post("/faults", #"{"delay_ms":3000,"delay_count":1}"#)
        try write("slow-answer")
        try waitUploaded()
        #expect(app.output.contains { $0.contains("did not answer upload within") }, "the slow answer was abandoned: \(app.output.suffix(5))")

        try write("good-1")
        try write("conflict", "refuse-409 it")
        try write("invalid", "refuse-422 it")
        try write("good-2")
        try waitUntil(timeout: 60, "the refusals set aside") { try db.uploadQueue.pendingCount() == 0 && db.uploadQueue.rejected().count == 2 }
        let reasons = try db.uploadQueue.rejected().map(\.error).joined(separator: "\n")
        #expect(reasons.contains("HTTP 409") && reasons.contains("HTTP 422"), "\(reasons)")

        // Killed while its upload waits on a slow answer; another app takes over.
        _ = try api.post("/faults", #"{"delay_ms":1500,"delay_count":1}"#)
        try write("owner-killed")
        try waitUntil(timeout: 30, "the upload to reach the API") { try api.stats()["uploads_in_progress"] == 1 }
        app.signal(SIGKILL)
        _ = try app.wait(timeout: 30)
        app = try Spawned(["app", a, "--connector", api.connector, "--json"], environment: environment)
        try waitUploaded()

        // The API saw a newer epoch for this client (a copy of the file, say): the owner steps
        // down, comes back above it, and uploads.
        let clientID = try db.read { try $0.stored(.clientID).stringValue ?? "" }
        _ = try api.post("/upload", #"{"version":1,"client_id":"\#(clientID)","epoch":1000,"transactions":[]}"#)
        try write("after-stale-epoch")
        try waitUploaded()
        #expect(try db.sync.status().epoch > 1000)
        #expect(app.output.contains { $0.contains(#""event":"lost_ownership""#) }, "\(app.output.suffix(5))")

        let stats = try api.stats()
        #expect(stats["most_applications"] == 1, "every transaction applied once: \(stats)")
        #expect(stats["rows"] == 7, "\(stats)")
        app.signal(SIGTERM)
        #expect(try app.wait(timeout: 30) == 0)
    }

    /// The Swift connector (URLSession) of `tandem-api-example`: its notes go up, another
    /// client's come down, through the same API as the connector program's.
    @Test func theSwiftConnectorSyncsThroughTheAPI() throws {
        let dir = try TemporaryDirectory()
        let api = try API(in: dir)
        let b = dir.path("b.db")
        let dbB = try SharedDatabase(path: b, schema: notesSchema)
        try dbB.execute("INSERT INTO notes(id, title) VALUES ('from-b', 'written on B')")
        dbB.close()
        #expect(try tandem(["sync", b, "--connector", api.connector]).status == 0)
        let binary = URL(fileURLWithPath: tandemBinary).deletingLastPathComponent().appendingPathComponent("tandem-api-example").path
        let swift = try Spawned(executable: binary, [api.url, dir.path("swift.db"), "from Swift", "and\t☃ another"])
        #expect(try swift.wait(timeout: 90) == 0, "\(swift.stderr)")
        #expect(swift.output == ["synced 3 notes"], "\(swift.output) \(swift.stderr)")
        #expect(try api.stats()["rows"] == 3)
        #expect(try tandem(["sync", b, "--connector", api.connector]).status == 0)
        let titles = try SharedDatabase(path: b).fetchAll("SELECT title FROM notes ORDER BY title").map { $0[0] }
        #expect(titles == [.text("and\t☃ another"), .text("from Swift"), .text("written on B")], "\(titles)")
    }

    /// A connector's own retry backoff is the owner's: a program that keeps failing is tried
    /// again about its first step later (2 s here, against the standard 50 ms), and the status
    /// says when.
    @Test func aConnectorSetsItsRetryBackoff() throws {
        let dir = try TemporaryDirectory()
        let a = dir.path("a.db")
        let db = try SharedDatabase(path: a, schema: notesSchema)
        defer { db.close() }
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'x')")
        let script = dir.path("connector.sh")
        let connector = try ConnectorTests.program("#!/bin/sh\necho down for maintenance >&2\nexit 1\n", at: script)
        let app = try Spawned(["app", a, "--connector", connector, "--json"], environment: ["TANDEM_CONNECTOR_BACKOFF": "2s-4s"])
        defer { app.signal(SIGKILL) }
        try app.waitForLine(timeout: 30, "a first failure") { $0.contains(#""event":"error""#) }
        try waitUntil(timeout: 30, "a second failure") { app.output.filter { $0.contains(#""event":"error""#) }.count >= 2 }
        let times = app.lines.filter { $0.text.contains(#""event":"error""#) }.map(\.at)
        #expect(
            times.count >= 2 && Double(times[1] - times[0]) / 1e6 > 1.5,
            "the second try came \(times.count >= 2 ? Double(times[1] - times[0]) / 1e6 : 0) s after the first: \(app.output.suffix(3))")
        let status = try db.sync.status()
        #expect(status.lastError?.contains("down for maintenance") == true && status.nextRetryAt != nil, "\(status)")
    }

    /// A pull a connector program declares with a URL is read from the API with a GET: the rows
    /// another host uploaded arrive exactly, a row the list loses leaves, and a URL that is not
    /// http(s) or that answers 404 is a clear failure that changes nothing.
    @Test func aPullReadsTheAPIsListFromItsURL() throws {
        let dir = try TemporaryDirectory()
        let api = try API(in: dir)
        let a = dir.path("a.db"), b = dir.path("b.db")
        let writer = try SharedDatabase(path: a, schema: VerifyTests.schema)
        defer { writer.close() }
        let values: [[any DatabaseValueConvertible]] = [
            ["p", "nul\u{0}and \"{json}\"", Int64.max, -0.0], ["q", "second", Int64.min, 0.1 + 0.2], ["r", "three", 2, 2.0],
        ]
        for row in values { try writer.execute("INSERT INTO items(id, title, n, r) VALUES (?, ?, ?, ?)", row) }
        #expect(try tandem(["sync", a, "--connector", api.connector]).status == 0)
        try SharedDatabase(path: b, schema: VerifyTests.schema).close()
        /// The host's connector program (one program: a client stays with its backend), now declaring `url`.
        func program(_ url: String) throws -> String {
            let script = dir.path("pulls.sh")
            let text = """
                #!/bin/sh
                case "$1" in
                  pulls) echo '{"version":1,"pulls":[{"table":"items","url":"\(url)"}]}' ;;
                  upload) echo '{"version":1,"batch":"applied"}' ;;
                  *) echo '{"version":1,"changes":[],"cursor":""}' ;;
                esac
                """
            return try ConnectorTests.program(text, at: script)
        }
        let list = try program(api.url + "/rows/items")
        let first = try tandem(["sync", b, "--connector", list, "--pull"])
        #expect(first.status == 0 && first.stdout.contains("pulled items: 3 inserted"), "\(first.stdout) \(first.stderr)")
        #expect(try Self.exactRows(b) == Self.exactRows(a))
        try writer.execute("DELETE FROM items WHERE id = 'q'")
        #expect(try tandem(["sync", a, "--connector", api.connector]).status == 0)
        let second = try tandem(["sync", b, "--connector", list, "--pull"])
        #expect(second.stdout.contains("pulled items: 0 inserted, 0 updated, 1 deleted, 2 unchanged"), "\(second.stdout) \(second.stderr)")
        #expect(try Self.exactRows(b) == Self.exactRows(a))
        for (url, message) in [("ftp://127.0.0.1/rows", "an http or https URL"), (api.url + "/nothing", "404")] {
            let refused = try tandem(["sync", b, "--connector", try program(url), "--pull"])
            #expect(refused.status != 0 && refused.stderr.contains(message), "\(url): \(refused.stderr)")
        }
        #expect(try Self.exactRows(b) == Self.exactRows(a))
        let reader = try SharedDatabase(path: b)
        defer { reader.close() }
        #expect(try reader.uploadQueue.pendingCount() == 0)
    }

    /// A Swift connector that applies every transaction after a pause of its own (an await).
    struct PausingConnector: SyncConnector {
        final class Log: Sendable { let entries = Mutex<[Int64]>([]) }
        let uploaded = Log()
        var identifier: String { "pausing" }
        var timeout: Duration { .seconds(10) }
        func upload(_ batch: UploadBatch) async throws -> [UploadOutcome] {
            try await Task.sleep(for: .milliseconds(20))
            uploaded.entries.withLock { $0 += batch.transactions.map(\.transactionID) }
            return batch.transactions.map { UploadOutcome(transactionID: $0.transactionID, .applied) }
        }
    }

    /// An API that answers for each transaction: the refused one is set aside with its reason
    /// and the others complete from that one answer, without sending the batch again one
    /// transaction at a time; one asked to retry later keeps itself and what follows queued
    /// while what came before it completes.
    @Test func perTransactionAnswersSettleTheBatchAtOnce() throws {
        let dir = try TemporaryDirectory()
        let a = dir.path("a.db")
        let db = try SharedDatabase(path: a, schema: VerifyTests.schema)
        defer { db.close() }
        for n in 0..<30 { try db.execute("INSERT INTO items(id, title) VALUES (?, ?)", ["t\(n)", n == 12 ? "bad" : n == 20 ? "later" : "ok"]) }
        let log = dir.path("calls.log"), script = dir.path("connector.py")
        let source = #"""
            import json, sys
            log, action = sys.argv[1], sys.argv[2]
            with open(log, "a") as f:
                f.write(action + "\n")
            if action != "upload":
                print(json.dumps({"version": 1, "changes": [], "cursor": ""}))
                sys.exit(0)
            request = json.load(sys.stdin)
            later = open(log).read().count("upload") == 1
            results = []
            for transaction in request["transactions"]:
                title = transaction["entries"][0].get("data", {}).get("title")
                if title == "bad":
                    results.append({"id": transaction["id"], "outcome": "refused", "reason": "HTTP 422: a bad title"})
                elif title == "later" and later:
                    results.append({"id": transaction["id"], "outcome": "retry", "reason": "busy"})
                else:
                    results.append({"id": transaction["id"], "outcome": "applied"})
            print(json.dumps({"version": 1, "results": results}))
            """#
        try Data(source.utf8).write(to: URL(fileURLWithPath: script))
        let connector = "exec:/usr/bin/python3 \(script) \(log)"
        let first = try runTandem(["sync", a, "--connector", connector], environment: ["TANDEM_CONNECTOR_BACKOFF": "10s-10s"])
        #expect(first.stderr.contains("asked to retry transaction"), "\(first.stderr)")
        #expect(try db.uploadQueue.pendingCount() == 10, "t20…t29 still queued")
        let rejected = try db.uploadQueue.rejected()
        #expect(rejected.count == 1 && rejected.first?.error.contains("a bad title") == true, "\(rejected)")
        let second = try tandem(["sync", a, "--connector", connector])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try db.uploadQueue.pendingCount() == 0)
        let uploads = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { $0 == "upload" }.count
        #expect(uploads == 2, "one upload call per batch: \(uploads)")
    }

    /// A command of plain words starts its program without a shell; anything a shell would
    /// read otherwise (quotes, expansions, an assignment, a program it cannot find) goes
    /// through `/bin/sh` as written.
    @Test func plainCommandsStartWithoutAShell() {
        #expect(ExecConnector.plainWords("/bin/sh /tmp/x.sh http://127.0.0.1:80/a?b=c") == nil, "? is the shell's")
        #expect(ExecConnector.plainWords("/bin/sh /tmp/x.sh http://127.0.0.1:80/api") == ["/bin/sh", "/tmp/x.sh", "http://127.0.0.1:80/api"])
        #expect(ExecConnector.plainWords("sh -x")?.first?.hasSuffix("/sh") == true)
        for shell in ["FOO=1 /bin/sh x", "/bin/sh 'a b'", "/bin/sh $HOME", "/bin/sh x > out", "/bin/sh x; rm y", "/nonexistent/prog", "~/prog"] {
            #expect(ExecConnector.plainWords(shell) == nil, "\(shell)")
        }
    }

    /// A connector's calls run on a thread of their own: an app whose async code holds every
    /// thread of Swift's shared pool (each blocked on a semaphore) does not hold up its uploads.
    @Test func aConnectorUploadsWhileTheAppBlocksSwiftsSharedPool() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: VerifyTests.schema)
        defer { db.close() }
        try db.execute("INSERT INTO items(id, title) VALUES ('a', 'x')")
        // The app's tasks, one per thread of the pool, queued before the upload's: they hold
        // the pool (with whatever other tests in this process hold) until the upload is done,
        // which is kept short so that other tests wait as little as possible.
        let release = DispatchSemaphore(value: 0)
        let width = ProcessInfo.processInfo.activeProcessorCount
        for _ in 0..<width { Task.detached { release.wait() } }
        defer { for _ in 0..<width { release.signal() } }
        let connector = PausingConnector()
        let began = Date()
        let result = try db.sync.once(with: ConnectorBackend(connector), backendName: connector.identifier)
        #expect(result.transactions == 1 && connector.uploaded.entries.withLock { $0.count } == 1)
        #expect(Date().timeIntervalSince(began) < 10, "the upload went through before the connector's timeout")
        #expect(try db.uploadQueue.pendingCount() == 0)
    }

    /// A program reads its request on standard input from a file that has no name (nothing is
    /// left in the temporary directory, whatever happens to either process), in the documented
    /// format: version, client id, epoch, and each transaction with its id and entries.
    @Test func aProgramReadsItsRequestFromAFileWithNoName() throws {
        let dir = try TemporaryDirectory()
        let a = dir.path("a.db")
        let db = try SharedDatabase(path: a, schema: VerifyTests.schema)
        defer { db.close() }
        try db.write { tx in
            try tx.execute("INSERT INTO items(id, title) VALUES ('a', ?)", ["x\u{0}\"{}"])
            try tx.execute("UPDATE items SET title = 'y' WHERE id = 'a'")
        }
        try db.execute("DELETE FROM items WHERE id = 'a'")
        let transactions = try db.fetchAll("SELECT tx_id FROM ps_crud GROUP BY tx_id ORDER BY min(id)").map { $0[0].int64Value ?? 0 }
        let script = dir.path("connector.sh")
        let program = """
            #!/bin/sh
            [ "$1" = upload ] || { echo '{"version":1,"changes":[],"cursor":""}'; exit 0; }
            readlink /proc/$$/fd/0 > '\(dir.path("stdin.txt"))'
            cat > '\(dir.path("request.json"))'
            echo '{"version":1,"batch":"applied"}'
            """
        let connector = try ConnectorTests.program(program, at: script)
        let sync = try tandem(["sync", a, "--connector", connector])
        #expect(sync.status == 0, "\(sync.stderr)")
        let stdin = try String(contentsOfFile: dir.path("stdin.txt"), encoding: .utf8)
        #expect(stdin.hasSuffix("(deleted)\n"), "the program's standard input: \(stdin)")
        let text = try String(contentsOfFile: dir.path("request.json"), encoding: .utf8)
        let (clientID, epoch) = try db.read { (try $0.stored(.clientID).stringValue ?? "", try $0.stored(.epoch).int64Value ?? 0) }
        #expect(transactions.count == 2)
        let expected =
            #"{"version":1,"client_id":"\#(clientID)","epoch":\#(epoch),"transactions":["#
            + #"{"id":\#(transactions.first ?? 0),"entries":[{"op":"PUT","table":"items","id":"a","data":{"Zed":null,"n":null,"r":null,"title":"x\u0000\"{}"}},{"op":"PATCH","table":"items","id":"a","data":{"title":"y"}}]},"#
            + #"{"id":\#(transactions.last ?? 0),"entries":[{"op":"DELETE","table":"items","id":"a"}]}]}"#
        #expect(text == expected)
        #expect(try db.uploadQueue.pendingCount() == 0)
    }

    /// A connector program that crashes, hangs, prints garbage or answers for a transaction it
    /// was not given: a clear error in the status, nothing marked uploaded.
    @Test(arguments: [
        ("exit 3", "exited with status 3"),
        ("echo not json", "not a JSON object"),
        (#"echo '{"version":1,"results":[{"id":999,"outcome":"applied"}]}'"#, "transaction 999, which the batch did not hold"),
        (#"echo '{"version":2,"batch":"applied"}'"#, "format version 2"),
        ("sleep 5", "did not answer upload within"),
    ])
    func aMisbehavingProgramChangesNothing(program: String, message: String) throws {
        let dir = try TemporaryDirectory()
        let a = dir.path("a.db")
        let db = try SharedDatabase(path: a, schema: VerifyTests.schema)
        defer { db.close() }
        try db.execute("INSERT INTO items(id, title) VALUES ('a', 'x')")
        let script = dir.path("connector.sh")
        let connector = try ConnectorTests.program("#!/bin/sh\n\(program)\n", at: script)
        let started = Date()
        let sync = try runTandem(["sync", a, "--connector", connector], environment: ["TANDEM_CONNECTOR_TIMEOUT": "500ms"])
        #expect(sync.status == 1 && sync.stderr.contains(message), "\(sync.stderr)")
        #expect(Date().timeIntervalSince(started) < 4, "the hanging program was killed at its timeout")
        #expect(try db.uploadQueue.pendingCount() == 1)
        #expect(try db.sync.status().lastError?.contains(message) == true)
    }
}
