import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI
@testable import TandemPostgres

@Suite struct StressTests {
    func stress(_ arguments: [String], timeout: Double = 120) throws -> (status: Int32, report: [String: Any], stderr: String) {
        let result = try runTandem(["stress"] + arguments + ["--json"], timeout: timeout)
        let object = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any]
        return (result.status, object ?? ["raw": result.stdout], result.stderr)
    }

    @Test func passesEveryCheckWithoutChaos() throws {
        let dir = try TemporaryDirectory()
        let run = try stress([dir.path("s.db"), "--writers", "3", "--transactions", "40", "--rows-per-transaction", "2"])
        #expect(run.status == 0, "\(run.report) \(run.stderr)")
        #expect(run.report["transactions"] as? Int == 120)
        let names = (run.report["checks"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
        #expect(names.contains("crud-entries") && names.contains("watchers-converged") && names.contains("integrity"))
    }

    @Test func passesWithKillMinus9Chaos() throws {
        let dir = try TemporaryDirectory()
        let run = try stress([dir.path("s.db"), "--writers", "3", "--transactions", "300", "--kill-every", "40"])
        #expect(run.status == 0, "\(run.report) \(run.stderr)")
        #expect((run.report["kills"] as? Int ?? 0) > 0, "no writer was killed: \(run.report)")
    }

    /// The shortest intervals finish too: a writer needs tens of milliseconds from its start to
    /// its first commit, and killing any writer every 1 ms starved them all (the run never ended).
    @Test(arguments: [1, 2, 5])
    func everyAcceptedKillIntervalFinishes(milliseconds: Int) throws {
        let dir = try TemporaryDirectory()
        let run = try stress([dir.path("s.db"), "--writers", "4", "--transactions", "60", "--kill-every", String(milliseconds)], timeout: 60)
        #expect(run.status == 0, "\(run.report) \(run.stderr)")
        #expect(run.report["transactions"] as? Int ?? 0 > 0 && (run.report["kills"] as? Int ?? 0) > 0, "\(run.report)")
        let refused = try runTandem(["stress", dir.path("t.db"), "--kill-every", "0"])
        #expect(refused.status == 2 && refused.stderr.contains("--kill-every takes a whole number from 1 to 3600000"), "\(refused.stderr)")
    }

    @Test func passesWithABackendAndOwnerKills() throws {
        let dir = try TemporaryDirectory()
        let run = try stress([
            dir.path("s.db"), "--writers", "3", "--transactions", "200", "--watchers", "1",
            "--backend", "sqlite:" + dir.path("server.db"), "--kill-every", "40",
        ])
        #expect(run.status == 0, "\(run.report) \(run.stderr)")
        let names = (run.report["checks"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
        #expect(names.contains("peer-equal") && names.contains("uploaded-once"))
    }

    /// The history's properties, each a verdict line, with owner kills and pauses and several rows
    /// per transaction; the seed is reported and given back replays the chaos.
    @Test func checksTheHistoryWithKillsAndPauses() throws {
        let dir = try TemporaryDirectory()
        let run = try stress([
            dir.path("s.db"), "--writers", "3", "--transactions", "250", "--rows-per-transaction", "3", "--watchers", "1",
            "--backend", "sqlite:" + dir.path("server.db"), "--kill-every", "30", "--seed", "7",
        ])
        #expect(run.status == 0, "\(run.report) \(run.stderr)")
        let names = (run.report["checks"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
        for property in ["read-your-writes", "monotonic-reads", "atomic-while-running", "peer-no-partial-transactions", "converged-verify", "committed-present"] {
            #expect(names.contains(property), "\(property) in \(names)")
        }
        #expect(run.report["seed"] as? Int == 7)
        #expect(run.report["peer_restores"] as? Int == 1, "the second client started again from its backup: \(run.report)")
        let text = try runTandem(["stress", dir.path("t.db"), "--writers", "1", "--transactions", "5", "--kill-every", "1000", "--seed", "12"])
        #expect(text.stdout.contains("all checks passed (seed 12: --seed 12 replays the chaos's choices)"), "\(text.stdout)")
        let bad = try runTandem(["stress", dir.path("u.db"), "--seed", "-1"])
        #expect(bad.status == 2 && bad.stderr.contains("--seed takes a whole number"), "\(bad.stderr)")
    }

    /// Through PostgreSQL, with the server crashed and restarted mid-run and the second client
    /// started again from an old backup of its file: every property holds.
    @Test(.enabled(if: TestPostgres.url != nil, "needs PostgreSQL (Tools/test installs it)"))
    func checksTheHistoryThroughAServerCrash() throws {
        let server = try PrivatePostgres()
        try PostgresBackend.setup(conninfo: server.url, schema: StressWriterCommand.schema)
        let dir = try TemporaryDirectory()
        let run = try stress(
            [
                dir.path("s.db"), "--writers", "3", "--transactions", "400", "--rows-per-transaction", "2", "--watchers", "1",
                "--backend", server.url, "--kill-every", "30", "--seed", "11", "--restart-server", server.crashRestartCommand,
            ], timeout: 240)
        #expect(run.status == 0, "\(run.report) \(run.stderr)")
        #expect(run.report["server_restarts"] as? Int == 1 && run.report["peer_restores"] as? Int == 1, "\(run.report)")
        let failed = run.report["failed_checks"] as? [String]
        #expect(failed == [], "\(String(describing: failed))")
    }

    /// The history's detectors fail when they should: a writer's rows missing after its commit
    /// (read-your-writes), another writer's highest transaction going back (monotonic reads),
    /// and a live query showing part of a transaction.
    @Test func theHistorysDetectorsFindViolations() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("s.db")
        let db = try SharedDatabase(path: path, schema: StressWriterCommand.schema)
        defer { db.close() }
        try db.execute("INSERT INTO stress(id, writer, txn, row) VALUES ('w0-t0-r0', 0, 0, 0), ('w0-t0-r1', 0, 0, 1), ('w1-t5-r0', 1, 5, 0)")
        var reads = StressWriterCommand.ReadHistory(writer: 0, rows: 2)
        #expect(try reads.check(after: 0, in: db, writers: 2).isEmpty)
        let missing = try reads.check(after: 1, in: db, writers: 2)
        #expect(missing.count == 1 && missing[0].hasPrefix("read-your-writes writer 0 read 0 of the 2 row(s) of its transaction 1"), "\(missing)")
        try db.execute("DELETE FROM stress WHERE id = 'w1-t5-r0'")
        try db.execute("INSERT INTO stress(id, writer, txn, row) VALUES ('w1-t3-r0', 1, 3, 0)")
        let back = try reads.check(after: 0, in: db, writers: 2)
        #expect(back == ["monotonic-reads writer 0 read writer 1's highest transaction 3 after reading 5"], "\(back)")

        var options = StressRun.Options(path: path)
        options.rowsPerTransaction = 2
        let run = StressRun(options: options)
        let watcher = try run.startPartialWatcher(path, label: "here")
        defer { watcher.terminate(); watcher.wait() }
        try waitUntil(timeout: 30, "the partial-transaction watcher to see the lone row") {
            run.state.withLock { $0.partialSeen.contains { $0.hasPrefix("here: ") } }
        }
    }

    /// The verifier catches a deleted row and a duplicated CRUD entry, naming the failed check.
    @Test func verifierCatchesTampering() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("s.db")
        #expect(try stress([path, "--writers", "2", "--transactions", "20", "--watchers", "0"]).status == 0)
        #expect(try runTandem(["stress", path, "--verify"]).status == 0)

        let shell = try Spawned(executable: "/usr/bin/sqlite3", [path, "INSERT INTO ps_crud(tx_id, data) SELECT tx_id, data FROM ps_crud WHERE id = 5"])
        #expect(try shell.wait() == 0)
        let duplicated = try stress([path, "--verify"])
        #expect(duplicated.status == 1)
        #expect(duplicated.report["failed_checks"] as? [String] == ["crud-entries"])

        let delete = try Spawned(
            executable: "/usr/bin/sqlite3", [path, "DELETE FROM ps_crud WHERE id > (SELECT max(id) - 1 FROM ps_crud); DELETE FROM ps_data__stress WHERE id = 'w1-t7-r0'"])
        #expect(try delete.wait() == 0)
        let deleted = try runTandem(["stress", path, "--verify"])
        #expect(deleted.status == 1)
        #expect(deleted.stdout.contains("FAILED committed-present: 1 reported commits missing: writer 1 txn 7"), "\(deleted.stdout)")
        #expect(deleted.stdout.contains("FAILED all-transactions"))
    }

    @Test func refusesADatabaseThatIsNotNew() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("s.db")
        #expect(try stress([path, "--writers", "1", "--transactions", "3", "--watchers", "0"]).status == 0)
        let again = try runTandem(["stress", path, "--writers", "1", "--transactions", "3"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("already exists; tandem stress writes into a new database file"), "\(again.stderr)")
    }
}
