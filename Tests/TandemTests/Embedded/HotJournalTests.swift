import Foundation
import Testing

/// A writer killed mid-transaction leaves a hot rollback journal, which only a read-write
/// connection can roll back: Tandem's read-only checks recover it instead of failing with
/// "attempt to write a readonly database".
@Suite struct HotJournalTests {
    @Test func aHotJournalIsRolledBackBeforeReadOnlyChecks() throws {
        let dir = try TemporaryDirectory()
        let server = dir.path("server.db")
        let killed = try Spawned(
            executable: "/usr/bin/python3",
            [
                "-c",
                """
                import sqlite3, os, sys
                c = sqlite3.connect(sys.argv[1], isolation_level=None)
                c.execute('CREATE TABLE t(a)')
                c.execute('BEGIN'); c.execute('CREATE TABLE u(b)')
                c.execute('INSERT INTO t SELECT randomblob(5000) FROM (SELECT 1 UNION SELECT 2 UNION SELECT 3)')
                os._exit(0)
                """, server,
            ])
        #expect(try killed.wait() == 0)
        #expect(FileManager.default.fileExists(atPath: server + "-journal"))
        let f = try SyncFixture()
        let result = try runTandem(["sync", f.a.path, "--backend", "sqlite:" + server])
        #expect(result.status == 1)
        #expect(result.stderr.contains("is an SQLite database but not a Tandem backend"), "\(result.stderr)")
    }
}
