import Foundation
import Testing
@testable import Tandem

@Suite struct WriteLockTimeoutTests {
    /// A Tandem process that holds the write lock longer than the busy timeout makes other
    /// writers fail with SQLITE_BUSY after the timeout, as SQLite's own lock would.
    @Test func waitingForTheWriteLockHonoursTheBusyTimeout() throws {
        let dir = try TemporaryDirectory()
        do { _ = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema) }
        let holder = try Spawned(testSupport: ["hold", dir.path("a.db"), "--seconds", "3"])
        try holder.waitForLine("locked") { $0 == "locked" }
        var configuration = Configuration()
        configuration.busyTimeout = .milliseconds(500)
        let db = try SharedDatabase(path: dir.path("a.db"), configuration: configuration)
        let start = nowMicroseconds()
        do {
            try db.execute("INSERT INTO notes(title) VALUES ('x')")
            Issue.record("wrote while another process held the write lock")
        } catch let error as SQLiteError {
            let waited = Double(nowMicroseconds() - start) / 1e6
            #expect(error.code == .busy)
            #expect(error.message.contains("longer than the busy timeout of 500 ms"), "\(error)")
            #expect(waited >= 0.5 && waited < 2.5, "gave up after \(waited) s")
        }
        try holder.wait()
        try db.execute("INSERT INTO notes(title) VALUES ('after')")
        #expect(try count(db, "SELECT count(*) FROM notes") == 1)
    }
}
