import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// A search index through PostgreSQL: rows another host wrote, a `psql` update, a server
/// `TRUNCATE`, all reach the index of a client that downloads them; what the client searches
/// is exactly what it holds.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct SearchSyncTests {
    func found(_ db: SharedDatabase, _ query: String) throws -> [String] {
        try db.search("searched_notes", matching: query).compactMap { $0["id"]?.stringValue }.sorted()
    }

    @Test func downloadsThroughPostgreSQLKeepTheIndex() throws {
        let url = try TestPostgres.database(schema: searchSchema)
        let dir = try TemporaryDirectory()
        let a = try SharedDatabase(path: dir.path("a.db"), schema: searchSchema)
        let b = try SharedDatabase(path: dir.path("b.db"), schema: searchSchema)
        try a.execute("INSERT INTO searched_notes(id, title, body) VALUES ('r1', 'milk', NULL), ('r2', 'bread', 'no milk'), ('r3', 'tea', NULL)")
        for db in [a, b] { #expect(try syncOnce(db, url)) }
        #expect(try found(b, "milk") == ["r1", "r2"])
        let psql = try PostgresConnection(url)
        try psql.execute("UPDATE searched_notes SET title = 'oat milk' WHERE id = 'r3'")
        try psql.execute("DELETE FROM searched_notes WHERE id = 'r1'")
        #expect(try syncOnce(b, url))
        #expect(try found(b, "milk") == ["r2", "r3"])
        try psql.execute("TRUNCATE searched_notes")
        #expect(try syncOnce(b, url))
        #expect(try found(b, "milk").isEmpty && b.checkLayout().isEmpty)
    }
}
