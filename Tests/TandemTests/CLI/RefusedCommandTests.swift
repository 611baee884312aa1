import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// A refused or failed command leaves the files as they were: no new files, no changed files.
@Suite struct RefusedCommandTests {
    let dir: TemporaryDirectory
    let schemaFile: String

    init() throws {
        dir = try TemporaryDirectory()
        schemaFile = try dir.schemaFile()
    }

    private func subdirectory(_ name: String) throws -> String {
        let path = dir.path(name)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A plain SQLite file in rollback-journal mode whose table `notes` collides with the schema:
    /// refused, still in its journal mode, and no -wal, -shm, -notify or -write.lock beside it.
    @Test func refusedInitLeavesAPlainFileAsItWas() throws {
        let files = try subdirectory("plain")
        let path = files + "/f.db"
        try sqlite(path, "CREATE TABLE notes(a)")
        let before = try listing(files)
        let result = try tandem(["init", path, "--schema", schemaFile])
        #expect(result.status == 1)
        #expect(result.stderr.contains("table 'notes' collides with an existing table of that name in '\(path)'"), "\(result.stderr)")
        #expect(try listing(files) == before)
        #expect(try sqlite(path, "PRAGMA journal_mode") == ["delete"])
    }

    /// A client bound to one backend, asked to sync with another: refused before the other
    /// server file is created, and before an existing one is changed.
    @Test func refusedSyncCreatesNoBackendFile() throws {
        let client = try subdirectory("client"), other = try subdirectory("other")
        let db = client + "/a.db"
        #expect(try tandem(["init", db, "--schema", schemaFile]).status == 0)
        let first = "sqlite:" + client + "/first.db"
        #expect(try tandem(["sync", db, "--backend", first]).status == 0)

        let before = try listing(other)
        for command in ["sync", "app"] {
            let result = try runTandem([command, db, "--backend", "sqlite:" + other + "/other.db"])
            #expect(result.status == 1)
            #expect(
                result.stderr.contains("syncs with another backend (\(first)) and cannot switch to 'sqlite:\(other)/other.db', which does not exist (nothing was created)"),
                "\(command): \(result.stderr)")
            #expect(try listing(other) == before, "\(command)")
        }

        // An existing server file of another backend is read, not changed.
        let stranger = other + "/b.db"
        #expect(try tandem(["init", stranger, "--schema", schemaFile]).status == 0)
        #expect(try tandem(["sync", stranger, "--backend", "sqlite:" + other + "/server.db"]).status == 0)
        let server = try listing(other)
        let result = try tandem(["sync", db, "--backend", "sqlite:" + other + "/server.db"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("syncs with another backend (\(first)) and cannot switch to 'sqlite:\(other)/server.db':"), "\(result.stderr)")
        let after = try listing(other)
        #expect(after == server, "\(server.filter { after[$0.key] != $0.value }) became \(after.filter { server[$0.key] != $0.value })")
    }

    /// A failure after `init` created the file (here the -notify file cannot be made, because a
    /// directory has its name) removes the database and the sidecar files it created.
    @Test func failedInitRemovesTheFilesItCreated() throws {
        let files = try subdirectory("blocked")
        for blocked in ["-notify", "-write.lock"] {
            try FileManager.default.createDirectory(atPath: files + "/a.db" + blocked, withIntermediateDirectories: false)
            let before = try listing(files)
            let result = try tandem(["init", files + "/a.db", "--schema", schemaFile])
            #expect(result.status == 1, "\(blocked)")
            #expect(result.stderr.contains("a.db\(blocked)"), "\(blocked): \(result.stderr)")
            #expect(try listing(files) == before, "\(blocked)")
            try FileManager.default.removeItem(atPath: files + "/a.db" + blocked)
        }
        #expect(try listing(files).isEmpty)
    }

    /// `init` and `sync` on a full file system (a small tmpfs): whatever they managed to create
    /// before the disk filled up is removed again; no empty database file is left behind.
    @Test func fullDiskLeavesNoFiles() throws {
        let mount = try subdirectory("full")
        let mounted = try Spawned(executable: "/usr/bin/env", ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mount])
        guard try mounted.wait() == 0 else {
            try Test.cancel("cannot mount a tmpfs here (\(mounted.stderr.trimmingCharacters(in: .whitespacesAndNewlines))); failedInitRemovesTheFilesItCreated covers the clean-up")
        }
        defer { _ = try? Spawned(executable: "/usr/bin/env", ["umount", "--lazy", mount]).wait() }
        let client = try subdirectory("client")

        var failures = 0
        for free in [0, 8, 24, 48, 80, 120, 160] {
            // A client of its own each time: one whose sync got through is bound to that server file.
            #expect(try tandem(["init", client + "/c\(free).db", "--schema", schemaFile]).status == 0)
            for name in try FileManager.default.contentsOfDirectory(atPath: mount) { try FileManager.default.removeItem(atPath: mount + "/" + name) }
            try fill(mount + "/filler", bytes: (256 - free) * 1024)
            for command in [["init", mount + "/a.db", "--schema", schemaFile], ["sync", client + "/c\(free).db", "--backend", "sqlite:" + mount + "/server.db"]] {
                let before = try listing(mount)
                let result = try runTandem(command)
                if result.status == 0 { continue }
                failures += 1
                #expect(result.stderr.contains("is full") && !result.stderr.contains("Fatal error"), "\(command[0]) with \(free) KiB free: \(result.stderr)")
                #expect(try listing(mount) == before, "\(command[0]) with \(free) KiB free: \(result.stderr)")
            }
        }
        #expect(failures > 0)
    }

    /// `sqlite:rel.db` is taken from the command's directory and recorded with its absolute path.
    /// From another directory the same relative path names another file, which is refused
    /// without being created; the first file, named any way, is the same backend.
    @Test func relativeBackendPathsAreResolved() throws {
        let a = try subdirectory("A"), b = try subdirectory("B")
        let db = a + "/a.db"
        #expect(try tandem(["init", db, "--schema", schemaFile]).status == 0)
        let first = try runTandem(in: a, ["sync", "a.db", "--backend", "sqlite:rel.db"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            try tandem(["query", db, "SELECT value FROM ps_kv WHERE key = 'backend_name'", "--json"]).stdout
                == #"[{"value":"sqlite:\#(a)/rel.db"}]"#)

        let before = try listing(b)
        let elsewhere = try runTandem(in: b, ["sync", db, "--backend", "sqlite:rel.db"])
        #expect(elsewhere.status == 1)
        #expect(
            elsewhere.stderr.contains("syncs with another backend (sqlite:\(a)/rel.db) and cannot switch to 'sqlite:\(b)/rel.db', which does not exist (nothing was created)"),
            "\(elsewhere.stderr)")
        #expect(try listing(b) == before)

        for (directory, url) in [(b, "sqlite:../A/rel.db"), (b, "sqlite:" + a + "/rel.db"), (a, "sqlite:./rel.db")] {
            let same = try runTandem(in: directory, ["sync", db, "--backend", url])
            #expect(same.status == 0, "\(url) from \(directory): \(same.stderr)")
        }
        #expect(try listing(b) == before)
    }
}
