import Foundation
import Testing
@testable import Tandem

@Suite struct OpeningTests {
    @Test func missingDirectoryNotADatabaseAndCorruptFilesAreClearErrors() throws {
        let dir = try TemporaryDirectory()
        let missing = dir.path("nope/a.db")
        #expect(throws: TandemError.cannotOpen(path: missing, reason: "the directory '\(dir.path("nope"))' does not exist")) {
            try SharedDatabase(path: missing, schema: notesSchema)
        }

        let text = dir.path("notes.txt")
        let original = Data("these are not the pages you are looking for\n".utf8)
        try original.write(to: URL(fileURLWithPath: text))
        #expect(throws: TandemError.cannotOpen(path: text, reason: "the file is not an SQLite database (bad header); it was left untouched")) {
            try SharedDatabase(path: text, schema: notesSchema)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: text)) == original)

        let corrupt = dir.path("corrupt.db")
        do { _ = try SharedDatabase(path: corrupt, schema: notesSchema) }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: corrupt))
        for i in 100..<bytes.count { bytes[i] = 0xA5 }
        try bytes.write(to: URL(fileURLWithPath: corrupt))
        try? FileManager.default.removeItem(atPath: corrupt + "-wal")
        try? FileManager.default.removeItem(atPath: corrupt + "-shm")
        do {
            _ = try SharedDatabase(path: corrupt, schema: notesSchema)
            Issue.record("opened a corrupt file")
        } catch let error as TandemError {
            guard case .cannotOpen(let path, let reason) = error else { Issue.record("\(error)"); return }
            #expect(path == corrupt)
            #expect(reason.contains("malformed") || reason.contains("not a database"), "\(reason)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: corrupt)) == bytes)
    }

    @Test func filesAreCreatedWithMode0600UnlessSharedModeIsAsked() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(title) VALUES ('x')")
        for suffix in ["", "-wal", "-shm", "-notify", "-write.lock"] {
            let mode = try FileManager.default.attributesOfItem(atPath: db.path + suffix)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(suffix) has mode \(String(mode ?? 0, radix: 8))")
        }
        var shared = Configuration()
        shared.fileMode = 0o660
        let group = try SharedDatabase(path: dir.path("g.db"), schema: notesSchema, configuration: shared)
        let mode = try FileManager.default.attributesOfItem(atPath: group.path)[.posixPermissions] as? Int
        #expect(mode == 0o660)
    }

    /// open-race: 12 processes open a rollback-journal file at one instant, 60 rounds. Each
    /// process opens all 60 files, file i at the instant start + i × 25 ms, so every round has
    /// its 12 simultaneous opens without 12 new processes per round.
    @Test func openRace() throws {
        let dir = try TemporaryDirectory()
        let schemaFile = try dir.schemaFile()
        let paths = (0..<60).map { dir.path("race-\($0).db") }
        let create = try Spawned(executable: "/usr/bin/sqlite3", [":memory:", paths.map { "ATTACH '\($0)' AS r; CREATE TABLE r.t(a); DETACH r;" }.joined()])
        #expect(try create.wait() == 0, "\(create.stderr)")
        let startAt = String(nowMicroseconds() + 300_000)
        let openers = try (0..<12).map { _ in
            try Spawned(testSupport: ["open-rounds", "--schema", schemaFile, "--start-at-us", startAt, "--interval-us", "25000"] + paths)
        }
        for opener in openers {
            let status = try opener.wait()
            #expect(status == 0, "\(opener.output.filter { $0.contains("error") }.prefix(3)) \(opener.stderr)")
            #expect(opener.output.count == 60)
        }
        for (round, path) in paths.enumerated() {
            let mode = try Spawned(executable: "/usr/bin/sqlite3", [path, "PRAGMA journal_mode"])
            try mode.wait()
            #expect(mode.output == ["wal"], "round \(round)")
        }
    }

    /// open-while-locked: another connection holds BEGIN EXCLUSIVE for 1 s while Tandem opens.
    @Test func openWhileLockedWaitsThenFailsAfterTheDeadline() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("locked.db")
        let create = try Spawned(executable: "/usr/bin/sqlite3", [path, "CREATE TABLE t(a)"])
        try create.wait()
        let holder = try pythonLockHolder(path: path, seconds: 1)
        let locked = try holder.waitForLine("locked") { $0 == "locked" }
        let db = try SharedDatabase(path: path, schema: notesSchema)
        let waited = Double(nowMicroseconds() - locked.at) / 1e6
        #expect(waited > 0.8, "opened after \(waited) s although the file was locked for 1 s")
        #expect(try db.journalMode() == "wal")
        try holder.wait()

        let path2 = dir.path("locked2.db")
        let create2 = try Spawned(executable: "/usr/bin/sqlite3", [path2, "CREATE TABLE t(a)"])
        try create2.wait()
        let longHolder = try pythonLockHolder(path: path2, seconds: 4)
        let locked2 = try longHolder.waitForLine("locked") { $0 == "locked" }
        var configuration = Configuration()
        configuration.openTimeout = .seconds(1)
        do {
            _ = try SharedDatabase(path: path2, schema: notesSchema, configuration: configuration)
            Issue.record("opened a file locked past the deadline")
        } catch let error as TandemError {
            let failedAfter = Double(nowMicroseconds() - locked2.at) / 1e6
            guard case .cannotOpen(let p, let reason) = error else { Issue.record("\(error)"); return }
            #expect(p == path2)
            #expect(reason.contains("locked"), "\(reason)")
            #expect(failedAfter >= 1.0 && failedAfter < 3.5, "failed after \(failedAfter) s with a 1 s deadline")
        }
        longHolder.signal(SIGKILL)
    }
}
