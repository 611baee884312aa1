import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// How PostgreSQL reads the feed's pages: in version order, stopping at the page's limit.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct PostgresFeedPlanTests {
    /// A page of a large batch, read right after the batch committed, while the planner's
    /// statistics know nothing of it (autovacuum has not analyzed the log yet; here it is off):
    /// the plan walks the version key and stops at the limit (``PostgresFeed/readingSettings``).
    /// Left to its estimates, the planner read the whole rest of the batch for every page and
    /// sorted it, so a batch of N changes cost N for each of its pages.
    @Test func aPageOfALargeBatchWalksTheVersionKey() throws {
        let db = try PostgresConnection(try TestPostgres.database(schema: notesSchema))
        _ = try db.execute("ALTER TABLE tandem_changes SET (autovacuum_enabled = false)")
        let xmax = try #require(try db.execute("SELECT pg_snapshot_xmax(pg_current_snapshot())::text").first?.first ?? nil)
        for part in 0..<20 {  // twenty transactions of 1,000 changes each
            _ = try db.execute("INSERT INTO notes(id, title) SELECT 'n' || i, 'note ' || i FROM generate_series($1::int * 1000 + 1, $1::int * 1000 + 1000) i", [String(part)])
        }
        let snapshot = try #require(try db.execute("SELECT pg_current_snapshot()::text").first?.first ?? nil)
        let arguments: [String?] = ["{}", xmax, snapshot, "2000", "1000"]
        // As a fetch reads it: in its transaction, with its settings.
        _ = try db.execute(PostgresConnection.begin("REPEATABLE READ READ ONLY"))
        _ = try db.execute(PostgresFeed.readingSettings)
        let plan = try db.execute("EXPLAIN " + PostgresFeed.batchRowsSQL(scoped: false, until: .limit(1000)), arguments).compactMap { $0.first ?? nil }
        let ahead = PostgresFeed.firstPageAhead(
            after: PostgresCursor(history: "", snapshot: "\(xmax):\(xmax):", grants: 0), limit: 1000)
        let aheadPlan = try db.execute("EXPLAIN " + ahead.sql, ahead.parameters).compactMap { $0.first ?? nil }
        _ = try db.execute("COMMIT")
        let text = plan.joined(separator: "\n")
        #expect(text.contains("Index Scan using tandem_changes_pkey"), "\(text)")
        #expect(!text.contains("Sort") && !text.contains("Bitmap"), "the page reads no more than it returns:\n\(text)")
        let aheadText = aheadPlan.joined(separator: "\n")
        #expect(!aheadText.contains("Sort") && aheadText.contains("Index Scan using tandem_changes_pkey"), "the page read ahead too:\n\(aheadText)")
        // The page itself: the 1,000 changes after version 2000, in order.
        let rows = try PostgresFeed.batchRows(
            on: db, old: try #require(PostgresSnapshot("\(xmax):\(xmax):")), new: snapshot, scoped: false, after: 2000, until: .limit(1000))
        let versions = rows.compactMap { $0.first.flatMap { $0 }.flatMap { Int64($0) } }
        #expect(versions.count == 1000 && versions.first == 2001 && versions == versions.sorted())
    }

    /// A role under row-level security keeps sorts: its pages read its scopes on the
    /// `(scope, xid)` index and sort those rows; a walk of the version key would pass every
    /// other tenant's changes.
    @Test func aScopedRoleKeepsSorts() throws {
        let fleet = try ScopedSyncTests.Fleet()
        for (url, expected) in [(fleet.admin, "off"), (fleet.url("a1"), "on")] {
            let db = try PostgresConnection(url)
            _ = try db.execute(PostgresConnection.begin("REPEATABLE READ READ ONLY"))
            _ = try db.execute(PostgresFeed.readingSettings)
            #expect(try db.execute("SHOW enable_sort").first?.first == expected, "\(url)")
            _ = try db.execute("COMMIT")
            #expect(try db.execute("SHOW enable_sort").first?.first == "on", "for the fetch's transaction only")
        }
    }
}
