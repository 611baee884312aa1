import Foundation
import Testing
@testable import Tandem

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
