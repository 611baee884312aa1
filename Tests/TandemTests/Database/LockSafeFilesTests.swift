import Foundation
import Testing
@testable import Tandem

/// While a database is open in a process, nothing else Tandem does in that process on the same
/// file (opening it again, checking it, surveying it, reading its WAL index, looking for its
/// users) cancels the POSIX locks SQLite holds on it: another process still cannot take the
/// file from under it (here: `sqlite3` switching it out of WAL mode, which needs every other
/// connection gone).
@Suite struct LockSafeFilesTests {
    /// What `sqlite3` says when it tries to take the file out of WAL mode.
    func switchOutOfWAL(_ path: String) throws -> String {
        let shell = try Spawned(executable: "/usr/bin/sqlite3", [path, ".timeout 0", "PRAGMA journal_mode=DELETE"])
        _ = try shell.wait(timeout: 30)
        return (shell.output.joined(separator: "\n") + shell.stderr).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func anotherLookAtAnOpenFileKeepsItsLocks() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("held.db")
        let db = try SharedDatabase(path: path, schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'x')")
        #expect(try db.fetchAll("SELECT count(*) FROM notes")[0][0] == .integer(1))
        #expect(try switchOutOfWAL(path).contains("locked"), "the open database holds the file")

        // Everything that looks at the file again from this process.
        let again = try SharedDatabase(path: path)
        again.close()
        _ = try SharedDatabase.check(path: path)
        _ = try SharedDatabase.checkLayout(path: path)
        _ = try DatabaseFileSurvey.of(path: path)
        _ = FileUsers.processes(using: [path] + DatabaseFiles(database: path).sidecars)
        try db.execute("INSERT INTO notes(id, title) VALUES ('b', 'y')")  // reads the WAL index's counters

        let answer = try switchOutOfWAL(path)
        #expect(answer.contains("locked"), "sqlite3 took the file from under an open database: \(answer)")
        #expect(try db.journalMode() == "wal")
        #expect(try db.fetchAll("SELECT count(*) FROM notes")[0][0] == .integer(2))
        db.close()
        #expect(try switchOutOfWAL(path) == "delete", "closed, the file is free")
    }
}
