import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// A fetch from a settled cursor whose changes fit in its first page is one round trip: the
/// position, the page and `COMMIT` in one pipeline. A full first page is fetched again in a
/// transaction of its own, and the backend commits ahead again only after a short first page.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct PostgresFetchRoundTripTests {
    @Test func aFetchWhoseChangesFitInItsFirstPageIsOneRoundTrip() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let backend = try PostgresBackend(conninfo: url)
        let other = try PostgresConnection(url)
        var cursor = try settledCursor(backend)
        /// Fetches after `cursor`; the batch and the round trips it took, the transaction closed.
        func fetch(limit: Int) throws -> (batch: ChangeBatch, roundTrips: Int) {
            let before = try backend.withConnection { $0.roundTrips }
            let batch = try backend.fetchChanges(after: cursor, limit: limit)
            let (after, idle) = try backend.withConnection { ($0.roundTrips, $0.isIdle) }
            #expect(idle, "the fetch's transaction has ended")
            cursor = batch.nextCursor
            return (batch, after - before)
        }
        func insert(_ id: String) throws { try other.execute("INSERT INTO notes(id, title) VALUES ($1, 'x')", [id]) }

        try insert("a")
        let short = try fetch(limit: 10)
        #expect(short.batch.changes.map(\.rowID) == ["a"] && !short.batch.hasMore)
        #expect(short.roundTrips == 1)
        #expect(try fetch(limit: 10).batch.changes.isEmpty, "nothing after it")

        try insert("b")
        try insert("c")
        let full = try fetch(limit: 1)
        #expect(full.batch.changes.map(\.rowID) == ["b"] && full.batch.hasMore, "a full first page: fetched again, in order")
        let rest = try fetch(limit: 1)
        #expect(rest.batch.changes.map(\.rowID) == ["c"] && !rest.batch.hasMore)

        try insert("d")
        let after = try fetch(limit: 10)
        #expect(after.batch.changes.map(\.rowID) == ["d"])
        #expect(after.roundTrips == 2, "after a full first page, the next fetch does not commit ahead")
        try insert("e")
        let again = try fetch(limit: 10)
        #expect(again.batch.changes.map(\.rowID) == ["e"])
        #expect(again.roundTrips == 1, "a short first page: committing ahead again")
    }
}
