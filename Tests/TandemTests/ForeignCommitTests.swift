import Foundation
import Synchronization
import Testing
@testable import Tandem

@Suite struct ForeignCommitTests {
    /// The sqlite3 shell commits to `notes` (no stamp, no wake-up), then a Tandem process commits
    /// to `todos` before this process's observer reads: the change to `notes` must still reach it
    /// (as "unknown tables changed"), with no help from the backstop poll.
    @Test func aForeignCommitFollowedByATandemCommitIsReported() throws {
        let dir = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.changePollInterval = 3600  // no backstop poll during the test
        let db = try SharedDatabase(path: dir.path("a.db"), schema: twoTables, configuration: configuration)
        let seen = Mutex<[DatabaseChange]>([])
        let token = try db.addChangeHandler { change in seen.withLock { $0.append(change) } }
        defer { db.removeChangeHandler(token) }
        let shell = try Spawned(executable: "/usr/bin/sqlite3", [db.path, "INSERT INTO notes(id, title) VALUES ('s', 'from the shell')"])
        #expect(try shell.wait() == 0, "\(shell.stderr)")
        #expect(try runTandem(["exec", db.path, "INSERT INTO todos(what) VALUES ('tandem')"]).status == 0)
        try waitUntil(timeout: 5, "a change that covers notes") {
            seen.withLock { $0.contains { $0.isUnknown || $0.tables.contains("notes") } }
        }
    }
}
