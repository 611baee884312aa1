import Foundation
import Synchronization
import Testing
@testable import Tandem
@testable import TandemCLI

/// A live query slower than the commits arriving runs once for all the commits that came during
/// its run, never once per commit, ends on the final state, and does not starve the sync engine
/// of its own process.
@Suite struct SlowLiveQueryTests {
    @Test func aSlowLiveQueryCoalescesCommitsAndSyncGoesOn() throws {
        let f = try SyncFixture(schema: StressWriterCommand.schema)
        let owner = try f.startOwner(f.a)
        defer { owner.signal(SIGTERM) }
        // B syncs in this process, beside a live query that takes tens of milliseconds a run.
        let session = try f.b.sync.start(url: try BackendURL(f.backendURL))
        defer { session.stop() }
        let slow = """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000)
            SELECT count(*) AS steps, (SELECT count(*) FROM stress) AS rows FROM n
            """
        let delivered = Mutex<[Int64]>([])
        let observation = try f.b.observe(slow) { result in
            if case .success(let rows) = result, let count = rows.first?["rows"]?.int64Value { delivered.withLock { $0.append(count) } }
        }
        defer { observation.cancel() }
        let commits = 400
        let writer = try runTandem(["stress-writer", f.a.path, "--writer", "0", "--transactions", String(commits)])
        #expect(writer.status == 0)
        try waitUntil(timeout: 60, "B's slow live query to show all \(commits) rows, synced by this process") {
            delivered.withLock { $0.last } == Int64(commits)
        }
        let runs = delivered.withLock { $0 }
        #expect(runs.count < commits / 4, "\(runs.count) results for \(commits) commits: runs cover many commits each")
        #expect(runs == runs.sorted(), "results only move forward")
    }
}
