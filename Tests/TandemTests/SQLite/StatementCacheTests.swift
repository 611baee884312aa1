import Testing
@testable import Tandem

/// Prepared statements are cached per connection, bounded, and a failed one is prepared afresh.
@Suite struct StatementCacheTests {
    @Test func theCacheIsBoundedAndDropsFailedStatements() throws {
        let dir = try TemporaryDirectory()
        let connection = try Connection(path: dir.path("c.db"), readOnly: false, busyTimeoutMilliseconds: 1000, rules: LayoutRules())
        try connection.execute("CREATE TABLE t(a INTEGER PRIMARY KEY)")
        for i in 0..<300 { _ = try connection.scalar("SELECT \(i)") }
        #expect(connection.cachedStatementCount <= 256)
        #expect(connection.isCached("SELECT 299") && !connection.isCached("SELECT 0"), "the least recently used go first")
        let insert = "INSERT INTO t(a) VALUES (?)"
        try connection.execute(insert, [.integer(1)])
        #expect(connection.isCached(insert))
        #expect(throws: SQLiteError.self) { try connection.execute(insert, [.integer(1)]) }
        #expect(!connection.isCached(insert), "a statement that failed is prepared afresh next time")
        try connection.execute(insert, [.integer(2)])
    }
}
