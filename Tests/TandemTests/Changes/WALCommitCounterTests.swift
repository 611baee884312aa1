import Foundation
import Testing
@testable import Tandem

@Suite struct WALCommitCounterTests {
    /// A writer reads where the WAL stands from its connection's mapping of the WAL index; the
    /// same header read from the `-shm` file must give the same position at every write: after
    /// commits, a checkpoint that restarts the WAL (its salt moves), another process's commit, and
    /// a WAL made anew after every connection closed.
    @Test func theMappedHeaderReadsAsTheFileDoes() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let counter = WALCommitCounter(databasePath: path)
        var seen: [WALCommitCounter.Position] = []
        func writeAndCompare(_ connection: Connection, _ sql: String) throws {
            try connection.execute("BEGIN IMMEDIATE")
            let mapped = counter.position(inConnection: connection.handle), read = counter.position
            #expect(mapped != nil, "no position from the mapped index")
            #expect(mapped == read, "mapped \(String(describing: mapped)) against read \(String(describing: read))")
            if let mapped { seen.append(mapped) }
            try connection.execute(sql)
            try connection.execute("COMMIT")
        }
        LockSafeFiles.retain(path)
        defer { LockSafeFiles.release(path) }
        for round in 0..<2 {
            let connection = try Connection(path: path, readOnly: false, busyTimeoutMilliseconds: 1000, rules: nil)
            try connection.execute("PRAGMA journal_mode=WAL")
            try connection.execute("CREATE TABLE IF NOT EXISTS t(x)")
            for i in 0..<5 { try writeAndCompare(connection, "INSERT INTO t VALUES (\(i))") }
            _ = try connection.scalar("PRAGMA wal_checkpoint(TRUNCATE)")
            try writeAndCompare(connection, "INSERT INTO t VALUES ('after a restart')")
            try sqliteShell(path, "INSERT INTO t VALUES ('the shell, round \(round)')")
            try writeAndCompare(connection, "INSERT INTO t VALUES ('after the shell')")
            connection.close(checkpointing: true)
        }
        #expect(Set(seen.map(\.salt)).count >= 3, "the WAL restarted and was made anew: \(seen)")
        #expect(seen.contains { $0.commits > 0 }, "commits were counted: \(seen)")
    }
}
