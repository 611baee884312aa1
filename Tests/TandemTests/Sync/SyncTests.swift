import Foundation
import Testing
@testable import Tandem

@Suite struct SyncTests {
    /// no-subscriber-upload: no live query anywhere; a helper's row reaches the backend within 1 s.
    @Test func uploadsWithoutAnySubscriber() throws {
        let f = try SyncFixture()
        let app = try f.startOwner(f.a)
        #expect(try tandem(["exec", f.a.path, "INSERT INTO notes(id, title) VALUES ('n1', 'hello')"]).status == 0)
        let committed = nowMicroseconds()
        let server = try EmbeddedBackend(path: f.serverPath)
        try waitUntil(timeout: 1, "the row on the backend within 1 s of the commit") { try server.rows().contains { $0.id == "n1" } }
        #expect(nowMicroseconds() - committed < 1_000_000)
        try waitUntil("the upload queue to empty") { try f.a.uploadQueue.pendingCount() == 0 }
        app.signal(SIGTERM)
        #expect(try app.wait() == 0)
        #expect(app.output.last?.contains("stopped") == true)
    }

    /// upload-retry: the server file is locked by another program; the owner retries by itself.
    @Test func retriesFailedUploadsWithBackoff() throws {
        let f = try SyncFixture()
        let url = f.backendURL + "?busy_timeout_ms=200"
        let app = try f.startOwner(f.a, url: url)
        try waitUntil("first sync") { try f.a.sync.status().hasSynced }
        let holder = try pythonLockHolder(path: f.serverPath, seconds: 2.5, mode: "IMMEDIATE")
        try holder.waitForLine("locked") { $0 == "locked" }
        try f.a.execute("INSERT INTO notes(id, title) VALUES ('r1', 'retry me')")
        try waitUntil(timeout: 2, "status to show the last error") { try f.a.sync.status().lastError != nil }
        let status = try f.a.sync.status()
        #expect(status.lastError?.contains("locked") == true, "\(status.lastError ?? "")")
        #expect(status.lastFailure?.kind == .backendUnavailable, "\(String(describing: status.lastFailure))")
        #expect(status.connected == false)
        let json = try tandem(["status", f.a.path, "--json"])
        #expect(json.stdout.contains(#""last_error":"#) && !json.stdout.contains(#""last_error":null"#))
        try holder.wait()
        let server = try EmbeddedBackend(path: f.serverPath)
        try waitUntil(timeout: 10, "the row to arrive after the lock is released") { try server.rows().contains { $0.id == "r1" } }
        try waitUntil("the error to clear") { try f.a.sync.status().lastError == nil }
        #expect(app.output.contains { $0.contains(#""event":"error""#) })
        app.signal(SIGTERM)
        try app.wait()
    }

    /// delete-uploads: a synced row deleted locally is deleted on the backend and on another client.
    @Test func deletesReachTheBackendAndOtherClients() throws {
        let f = try SyncFixture()
        let appA = try f.startOwner(f.a)
        let appB = try f.startOwner(f.b)
        try f.a.execute("INSERT INTO notes(id, title) VALUES ('d1', 'doomed')")
        try waitUntil("the row on B") { try count(f.b, "SELECT count(*) FROM notes WHERE id = 'd1'") == 1 }
        try f.a.execute("DELETE FROM notes WHERE id = 'd1'")
        try waitUntil("the deletion on B") { try count(f.b, "SELECT count(*) FROM notes WHERE id = 'd1'") == 0 }
        #expect(try f.serverRows().isEmpty)
        #expect(try count(f.b, "SELECT count(*) FROM ps_crud") == 0, "downloads must not be queued for upload")
        appA.signal(SIGTERM); appB.signal(SIGTERM)
        try appA.wait(); try appB.wait()
    }

    /// two-app-processes: exactly one owner at a time; each transaction reaches the backend once.
    @Test func twoAppProcessesHaveOneOwner() throws {
        let f = try SyncFixture(
            schema: Schema(tables: [
                TableSchema(
                    name: "stress", columns: [.integer("writer"), .integer("txn"), .integer("row"), .text("payload"), .integer("written_at")])
            ]))
        let first = try Spawned(["app", f.a.path, "--backend", f.backendURL, "--json"])
        let second = try Spawned(["app", f.a.path, "--backend", f.backendURL, "--json"])
        try waitUntil("an owner") { (first.output + second.output).contains { $0.contains("became_owner") } }
        let writer = try Spawned(["stress-writer", f.a.path, "--writer", "1", "--transactions", "30"])
        #expect(try writer.wait() == 0)
        let owners = [first, second].filter { $0.output.contains { $0.contains("became_owner") } }
        #expect(owners.count == 1)
        let owner = try #require(owners.first)
        let standby = owner === first ? second : first
        owner.signal(SIGTERM)
        try owner.wait()
        try standby.waitForLine("became_owner after the first owner left") { $0.contains("became_owner") }
        let writer2 = try Spawned(["stress-writer", f.a.path, "--writer", "2", "--transactions", "30"])
        #expect(try writer2.wait() == 0)
        let server = try EmbeddedBackend(path: f.serverPath)
        try waitUntil("60 rows on the backend") { try server.rows().count == 60 }
        try waitUntil("an empty upload queue") { try f.a.uploadQueue.pendingCount() == 0 }
        let log = try Spawned(executable: "/usr/bin/sqlite3", [f.serverPath, "SELECT count(*), count(DISTINCT id) FROM server_changes; SELECT count(*) FROM server_uploads"])
        try log.wait()
        #expect(log.output == ["60|60", "60"])
        standby.signal(SIGTERM)
        try standby.wait()
    }

    /// failover: kill -9 the owner of three app processes while writers keep writing.
    @Test func failoverAfterKillDeliversEverythingOnceInOrder() throws {
        let schema = Schema(tables: [TableSchema(name: "stress", columns: [.integer("writer"), .integer("txn"), .integer("row"), .text("payload"), .integer("written_at")])])
        let f = try SyncFixture(schema: schema)
        let apps = try (0..<3).map { _ in try Spawned(["app", f.a.path, "--backend", f.backendURL, "--json"]) }
        try waitUntil("an owner") { apps.contains { $0.output.contains { $0.contains("became_owner") } } }
        let appB = try f.startOwner(f.b)
        let startEpoch = try f.a.sync.status().epoch
        let writers = try (0..<2).map { w in try Spawned(["stress-writer", f.a.path, "--writer", String(w), "--transactions", "150"]) }
        try writers[0].waitForLine("some commits") { $0.hasPrefix("20 ") }
        let owner = try #require(apps.first { $0.output.contains { $0.contains("became_owner") } })
        let killedAt = nowMicroseconds()
        owner.signal(SIGKILL)
        let survivors = apps.filter { $0 !== owner }
        try waitUntil("a new owner") { survivors.contains { $0.output.contains { $0.contains("became_owner") } } }
        let newOwner = try #require(survivors.first { $0.output.contains { $0.contains("became_owner") } })
        let took = try newOwner.waitForLine("became_owner") { $0.contains("became_owner") }
        print("failover: owner killed to new owner announced in \(Double(took.at - killedAt) / 1000) ms")
        #expect(try f.a.sync.status().epoch == startEpoch + 1)
        #expect(try f.a.sync.status().ownerPID == newOwner.pid)
        for writer in writers { #expect(try writer.wait() == 0) }

        try waitUntil(timeout: 20, "B to hold all 300 rows") { try count(f.b, "SELECT count(*) FROM stress") == 300 }
        let query = "SELECT * FROM stress ORDER BY id"
        #expect(try f.a.fetchAll(query) == f.b.fetchAll(query))
        let log = try Spawned(
            executable: "/usr/bin/sqlite3",
            [
                f.serverPath,
                """
                SELECT count(*), count(DISTINCT id) FROM server_changes;
                SELECT count(*) FROM (SELECT json_extract(data, '$.writer') AS w, json_extract(data, '$.txn') AS t, version,
                  lag(json_extract(data, '$.txn')) OVER (PARTITION BY json_extract(data, '$.writer') ORDER BY version) AS prev FROM server_changes) WHERE t <= prev;
                """,
            ])
        try log.wait()
        #expect(log.output == ["300|300", "0"], "duplicates or out-of-order uploads: \(log.output)")
        for app in survivors + [appB] { app.signal(SIGTERM) }
        for app in survivors + [appB] { try app.wait() }
    }

    /// fencing: an owner whose epoch is stale cannot complete an upload or apply a download.
    @Test func staleEpochCannotCompleteUploadsOrApplyDownloads() throws {
        let f = try SyncFixture()
        let backend = try EmbeddedBackend(path: f.serverPath)
        let stale = try OwnerElection(database: f.a)
        let staleEpoch = try #require(try stale.tryAcquire())
        try f.a.execute("INSERT INTO notes(id, title) VALUES ('f1', 'fenced')")
        // Another process takes over (the epoch moves on) while the stale owner still runs.
        try f.a.write { try $0.executeOwn("UPDATE ps_kv SET value = value + 1 WHERE key = 'epoch'") }  // another owner, as Tandem writes it
        let pass = SyncPass(database: f.a, backend: backend, epoch: staleEpoch, clientID: try f.a.clientID())
        #expect(throws: TandemError.staleEpoch(held: staleEpoch, current: staleEpoch + 1)) { _ = try pass.run() }
        #expect(try f.a.uploadQueue.pendingCount() == 1, "a stale owner removed entries from the queue")

        // The backend refuses uploads older than an epoch it has seen for the client.
        let transactions = try f.a.uploadQueue.transactions(limit: 10)
        try backend.upload(transactions, clientID: try f.a.clientID(), epoch: staleEpoch + 1)
        #expect(throws: TandemError.staleEpoch(held: staleEpoch, current: staleEpoch + 1)) {
            try backend.upload(transactions, clientID: try f.a.clientID(), epoch: staleEpoch)
        }

        // A stale owner on B cannot apply a download either.
        try f.b.write { try $0.executeOwn("UPDATE ps_kv SET value = 7 WHERE key = 'epoch'") }
        var result = SyncPass.Result()
        let staleB = SyncPass(database: f.b, backend: backend, epoch: 6, clientID: try f.b.clientID())
        #expect(throws: TandemError.staleEpoch(held: 6, current: 7)) { try staleB.download(into: &result) }
        #expect(try count(f.b, "SELECT count(*) FROM notes") == 0)
        let current = SyncPass(database: f.b, backend: backend, epoch: 7, clientID: try f.b.clientID())
        try current.download(into: &result)  // never deferred now: the count below shows it applied
        #expect(try count(f.b, "SELECT count(*) FROM notes") == 1)
        stale.release()
    }

    /// offline: writes made while no app runs are uploaded when one starts; `tandem sync` works for scripts.
    @Test func offlineWritesUploadWhenAnAppStarts() throws {
        let f = try SyncFixture()
        for i in 0..<5 { try f.a.execute("INSERT INTO notes(id, title) VALUES (?, 'offline')", ["o\(i)"]) }
        #expect(try f.a.uploadQueue.pendingCount() == 5)
        let app = try f.startOwner(f.a)
        try waitUntil("the queue to drain") { try f.a.uploadQueue.pendingCount() == 0 }
        #expect(try f.serverRows().count == 5)

        let refused = try tandem(["sync", f.b.path, "--backend", f.backendURL])
        #expect(refused.status == 0)
        #expect(try count(f.b, "SELECT count(*) FROM notes") == 5)
        let busy = try tandem(["sync", f.a.path, "--backend", f.backendURL])
        #expect(busy.status == 1)
        #expect(busy.stderr.contains("owns sync"), "\(busy.stderr)")
        let status = try tandem(["status", f.a.path, "--json"])
        #expect(status.stdout.contains(#""owner_pid":\#(app.pid)"#), "\(status.stdout)")
        app.signal(SIGTERM)
        try app.wait()
        let after = try tandem(["status", f.a.path, "--json"])
        #expect(after.stdout.contains(#""owner_pid":null"#), "\(after.stdout)")
    }

    /// Processes that create the backend file at one instant agree on it.
    @Test func concurrentFirstUseOfABackend() throws {
        let f = try SyncFixture()
        let startAt = String(nowMicroseconds() + 200_000)
        let clients = try (0..<6).map { i -> SharedDatabase in try SharedDatabase(path: f.dir.path("c\(i).db"), schema: notesSchema) }
        for (i, client) in clients.enumerated() { try client.execute("INSERT INTO notes(id, title) VALUES (?, 'x')", ["c\(i)"]) }
        let syncs = try clients.map { try Spawned(["sync", $0.path, "--backend", f.backendURL], environment: ["TANDEM_START_AT_US": startAt]) }
        for sync in syncs { #expect(try sync.wait() == 0, "\(sync.stderr)") }
        #expect(try f.serverRows().count == 6)
    }

    @Test func badBackendURLsAreClearErrorsAtStart() throws {
        let f = try SyncFixture()
        let unknown = try runTandem(["app", f.a.path, "--backend", "ftp://x"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("unknown backend scheme 'ftp'"), "\(unknown.stderr)")
        let missing = try runTandem(["app", f.a.path, "--backend", "sqlite:/nonexistent/dir/server.db"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("'/nonexistent/dir' of the backend file"), "\(missing.stderr)")
        let client = try tandem(["sync", f.a.path, "--backend", "sqlite:" + f.b.path])
        #expect(client.status == 1)
        #expect(client.stderr.contains("is a client database"), "\(client.stderr)")
    }

    /// A database that never synced waits out the timeout and says so; one that has synced
    /// says so at once, also with no owner running.
    @Test func firstSyncWaitsEndAtTheTimeoutUnlessSynced() async throws {
        let f = try SyncFixture()
        #expect(try await f.b.sync.waitForFirstSync(timeout: .milliseconds(200)) == false)
        #expect(try syncOnce(f.b, f.backendURL))
        #expect(try await f.b.sync.waitForFirstSync(timeout: .seconds(10)))
    }

    @Test func libraryWaitsForFirstSyncAndObservesStatus() async throws {
        let f = try SyncFixture()
        try f.a.execute("INSERT INTO notes(id, title) VALUES ('x', 'from a')")
        #expect(try syncOnce(f.a, f.backendURL))
        let session = try f.b.sync.start(with: try openBackend(url: f.backendURL), backendName: f.backendURL)
        let synced = try await f.b.sync.waitForFirstSync(timeout: .seconds(10))
        #expect(synced, "B's status after 10 s: \(String(describing: try? f.b.sync.status()))")
        #expect(try count(f.b, "SELECT count(*) FROM notes") == 1)
        var events = session.events.makeAsyncIterator()
        let first = try await events.next(within: 10, "the first sync event")
        guard case .becameOwner = first else { Issue.record("first event \(String(describing: first))"); return }
        session.stop()
        #expect(try f.b.sync.status().ownerPID == nil)
    }
}
