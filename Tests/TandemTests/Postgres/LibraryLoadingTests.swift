import Foundation
import Testing
@testable import Tandem

/// libpq is loaded when a PostgreSQL backend is first used (`CLibPQ`'s shim), so that the
/// commands that never use one start without it and the twenty libraries it brings in.
@Suite struct LibraryLoadingTests {
    /// The shared libraries mapped into the process `pid`, by file name.
    private static func libraries(of pid: pid_t) throws -> Set<String> {
        // Read to its end: a /proc file's size (0) says nothing of its length.
        let file = try #require(FileHandle(forReadingAtPath: "/proc/\(pid)/maps"))
        let maps = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
        return Set(maps.split(separator: "\n").compactMap { $0.split(separator: "/").last.map(String.init) }.filter { $0.contains(".so") })
    }

    @Test func anAppOnTheEmbeddedBackendRunsWithoutLibpq() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('n1', 'synced')")
        let app = try Spawned(["app", db.path, "--backend", "sqlite:" + dir.path("server.db"), "--json"])
        try app.waitForLine("uploaded") { $0.contains("\"uploaded\"") }
        let loaded = try Self.libraries(of: app.pid)
        #expect(loaded.contains { $0.hasPrefix("libsqlite3.so") }, "the maps are read: SQLite is there")
        #expect(!loaded.contains { $0.hasPrefix("libpq.so") }, "libpq is not loaded: \(loaded.sorted())")
    }

    @Test(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
    func anAppOnPostgreSQLLoadsLibpqWhenItConnects() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('n1', 'synced')")
        let app = try Spawned(["app", db.path, "--backend", url, "--json"])
        try app.waitForLine("uploaded") { $0.contains("\"uploaded\"") }
        #expect(try Self.libraries(of: app.pid).contains { $0.hasPrefix("libpq.so") })
    }

    /// Every libpq function the shim calls is in the list its load checks, so that a libpq
    /// without one of them (an older one) is refused when connecting, never called through NULL.
    @Test func theShimChecksEveryFunctionItCalls() throws {
        let root = packageRoot
        let shim = try String(contentsOf: root.appendingPathComponent("Sources/CLibPQ/shim.h"), encoding: .utf8)
        let called = Set(shim.matches(of: /tandem_(PQ[A-Za-z]+)\(/).map { String($0.output.1) })
        let list = try #require(shim.firstMatch(of: /#define TANDEM_LIBPQ_FUNCTIONS\(X\)((?:.*\\\n)*.*\n)/)?.output.1)
        let checked = Set(list.matches(of: /X\((PQ[A-Za-z]+)\)/).map { String($0.output.1) })
        #expect(called.count >= 20 && called == checked, "called, not checked: \(called.subtracting(checked).sorted())")
    }
}
