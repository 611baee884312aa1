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
        schemaFile = dir.path("schema.json")
        try notesSchema.jsonData().write(to: URL(fileURLWithPath: schemaFile))
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
        let result = try runTandem(["init", path, "--schema", schemaFile])
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
        #expect(try runTandem(["init", db, "--schema", schemaFile]).status == 0)
        let first = "sqlite:" + client + "/first.db"
        #expect(try runTandem(["sync", db, "--backend", first]).status == 0)

        let before = try listing(other)
        for command in ["sync", "app"] {
            let result = try runTandem([command, db, "--backend", "sqlite:" + other + "/other.db"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("syncs with another backend (\(first)) and cannot switch to 'sqlite:\(other)/other.db', which does not exist (nothing was created)"),
                    "\(command): \(result.stderr)")
            #expect(try listing(other) == before, "\(command)")
        }

        // An existing server file of another backend is read, not changed.
        let stranger = other + "/b.db"
        #expect(try runTandem(["init", stranger, "--schema", schemaFile]).status == 0)
        #expect(try runTandem(["sync", stranger, "--backend", "sqlite:" + other + "/server.db"]).status == 0)
        let server = try listing(other)
        let result = try runTandem(["sync", db, "--backend", "sqlite:" + other + "/server.db"])
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
            let result = try runTandem(["init", files + "/a.db", "--schema", schemaFile])
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
        defer { _ = try? Spawned(executable: "/usr/bin/env", ["umount", mount]).wait() }
        let client = try subdirectory("client")
        #expect(try runTandem(["init", client + "/c.db", "--schema", schemaFile]).status == 0)

        var failures = 0
        for free in [0, 8, 24, 48, 80, 120, 160] {
            for name in try FileManager.default.contentsOfDirectory(atPath: mount) { try FileManager.default.removeItem(atPath: mount + "/" + name) }
            try fill(mount + "/filler", bytes: (256 - free) * 1024)
            for command in [["init", mount + "/a.db", "--schema", schemaFile], ["sync", client + "/c.db", "--backend", "sqlite:" + mount + "/server.db"]] {
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
        #expect(try runTandem(["init", db, "--schema", schemaFile]).status == 0)
        let first = try runTandem(in: a, ["sync", "a.db", "--backend", "sqlite:rel.db"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try runTandem(["query", db, "SELECT value FROM ps_kv WHERE key = 'backend_name'", "--json"]).stdout
                == #"[{"value":"sqlite:\#(a)/rel.db"}]"#)

        let before = try listing(b)
        let elsewhere = try runTandem(in: b, ["sync", db, "--backend", "sqlite:rel.db"])
        #expect(elsewhere.status == 1)
        #expect(elsewhere.stderr.contains("syncs with another backend (sqlite:\(a)/rel.db) and cannot switch to 'sqlite:\(b)/rel.db', which does not exist (nothing was created)"),
                "\(elsewhere.stderr)")
        #expect(try listing(b) == before)

        for (directory, url) in [(b, "sqlite:../A/rel.db"), (b, "sqlite:" + a + "/rel.db"), (a, "sqlite:./rel.db")] {
            let same = try runTandem(in: directory, ["sync", db, "--backend", url])
            #expect(same.status == 0, "\(url) from \(directory): \(same.stderr)")
        }
        #expect(try listing(b) == before)
    }
}

/// Errors in the user's terms: the table, the id, the directory; output that cannot drive the terminal.
@Suite struct UserTermsErrorTests {
    let dir: TemporaryDirectory

    init() throws { dir = try TemporaryDirectory() }

    /// A duplicate id through a view names the table and the id, not the data table behind it.
    @Test func duplicateIDNamesTheTableAndTheID() throws {
        let schema = Schema(tables: notesSchema.tables + [Table(name: "secrets", columns: [.text("v")], localOnly: true)])
        let db = try SharedDatabase(path: dir.path("a.db"), schema: schema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('x', 'first'); INSERT INTO secrets(id, v) VALUES ('s', 'v')")

        for (sql, arguments) in [("INSERT INTO notes(id, title) VALUES ('x', 'again')", [String]()),
                                 ("INSERT INTO notes(id, title) VALUES (?, ?)", ["x", "again"])] {
            let result = try runTandem(["exec", db.path, sql] + arguments)
            #expect(result.status == 1)
            #expect(result.stderr.contains("a row with id 'x' already exists in table notes"), "\(result.stderr)")
            #expect(!result.stderr.contains("ps_data"), "\(result.stderr)")
        }
        do {
            try db.execute("INSERT INTO secrets(id, v) VALUES (?, 'w')", ["s"])
            Issue.record("inserted a duplicate id")
        } catch let error as SQLiteError {
            #expect(error.code == .constraint)
            #expect(error.message == "a row with id 's' already exists in table secrets", "\(error)")
        }
        let copied = try runTandem(["exec", db.path, "INSERT INTO notes(id) SELECT id FROM notes"])
        #expect(copied.stderr.contains("a row with that id already exists in table notes"), "\(copied.stderr)")
        // OR REPLACE and OR IGNORE keep working.
        #expect(try runTandem(["exec", db.path, "INSERT OR REPLACE INTO notes(id, title) VALUES ('x', 'replaced')"]).status == 0)
        #expect(try runTandem(["exec", db.path, "INSERT OR IGNORE INTO notes(id, title) VALUES ('x', 'ignored')"]).status == 0)
        #expect(try db.fetchAll("SELECT title FROM notes WHERE id = 'x'").first?[0] == .text("replaced"))
    }

    /// A directory this user may not write: the error names it, whether the database is to be
    /// created there or exists without its -wal and -shm files.
    @Test(.enabled(if: unprivileged != nil, "needs setpriv or runuser to run tandem as an unprivileged user"))
    func unwritableDirectoryIsNamed() throws {
        let schemaFile = dir.path("schema.json")
        try notesSchema.jsonData().write(to: URL(fileURLWithPath: schemaFile))
        let locked = dir.path("locked")
        try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
        #expect(try runTandem(["init", locked + "/existing.db", "--schema", schemaFile]).status == 0)
        try sqlite(locked + "/existing.db", "PRAGMA wal_checkpoint(TRUNCATE)")  // the last connection removes -wal and -shm
        for name in try FileManager.default.contentsOfDirectory(atPath: locked) { chown(locked + "/" + name, 65534, 65534) }
        chmod(locked, 0o555)
        let before = try listing(locked)

        for command in [["init", locked + "/new.db", "--schema", schemaFile], ["query", locked + "/existing.db", "SELECT 1"],
                        ["exec", locked + "/existing.db", "INSERT INTO notes(title) VALUES ('x')"]] {
            let result = try runTandemUnprivileged(command)
            #expect(result.status == 1, "\(command[0])")
            #expect(result.stderr.contains("the directory '\(locked)' is not writable"), "\(command[0]): \(result.stderr)")
            #expect(!result.stderr.contains("sqlite_master"), "\(command[0]): \(result.stderr)")
        }
        #expect(try listing(locked) == before)
    }

    /// A backend path that is a directory says so.
    @Test func backendPathThatIsADirectorySaysSo() throws {
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let server = dir.path("server.db")
        try FileManager.default.createDirectory(atPath: server, withIntermediateDirectories: false)
        let result = try runTandem(["sync", db.path, "--backend", "sqlite:" + server])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot use '\(server)' as the backend file: it is a directory"), "\(result.stderr)")
        #expect(!result.stderr.contains("disk I/O error"), "\(result.stderr)")
    }

    /// Table output shows control characters as escapes; JSON output is unchanged.
    @Test func tableOutputEscapesControlCharacters() throws {
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let title = "a\nb\tc\rd\u{1B}[31me\u{7F}f\u{01}g\u{9B}h"
        try db.execute("INSERT INTO notes(id, title) VALUES ('t', ?)", [title])

        let table = try runTandem(["query", db.path, "SELECT title AS \"x\ny\" FROM notes"])
        #expect(table.status == 0)
        #expect(table.stdout.contains(#"a\nb\tc\rd\x1b[31me\x7ff\x01g\x9bh"#), "\(table.stdout)")
        #expect(table.stdout.contains(#"x\ny"#), "\(table.stdout)")
        #expect(!table.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value) })
        #expect(table.stdout.split(separator: "\n").count == 4, "\(table.stdout)")

        let json = try runTandem(["query", db.path, "SELECT title FROM notes", "--json"])
        let decoded = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: String]]
        #expect(decoded == [["title": title]])
    }
}

// MARK: - Helpers

/// Runs `sqlite3 path sql` and returns its output lines.
@discardableResult
private func sqlite(_ path: String, _ sql: String) throws -> [String] {
    let shell = try Spawned(executable: "/usr/bin/sqlite3", [path, sql])
    let status = try shell.wait()
    guard status == 0 else { throw TestFailure("sqlite3 \(path) \(sql): \(shell.stderr)") }
    return shell.output
}

/// Writes a file of `bytes` zero bytes in place (no temporary copy).
private func fill(_ path: String, bytes: Int) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw SystemError(call: "open(2)", path: path, errno: errno) }
    defer { close(fd) }
    let zeros = [UInt8](repeating: 0, count: bytes)
    guard write(fd, zeros, bytes) == bytes else { throw SystemError(call: "write(2)", path: path, errno: errno) }
}

/// Every entry of a directory: a file's size and a hash of its contents, or "directory".
private func listing(_ directory: String) throws -> [String: String] {
    var entries: [String: String] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
        let path = directory + "/" + name
        var info = stat()
        guard lstat(path, &info) == 0 else { continue }
        if info.st_mode & S_IFMT == S_IFDIR {
            entries[name] = "directory"
            continue
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
        for byte in try Data(contentsOf: URL(fileURLWithPath: path)) {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        entries[name] = "\(info.st_size) bytes, \(String(hash, radix: 16))"
    }
    return entries
}

/// Runs `tandem ARGS…` with `directory` as its current directory.
private func runTandem(in directory: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    let spawned = try Spawned(executable: "/bin/sh", ["-c", #"cd "$0" && exec "$@""#, directory, tandemBinary] + arguments)
    let status = try spawned.wait()
    return (status, spawned.output.joined(separator: "\n"), spawned.stderr)
}

/// How to run a program as user and group 65534 (nobody), or nil when no tool for it exists.
private let unprivileged: [String]? = {
    if getuid() != 0 { return [] }
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") {
        return ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    }
    for runuser in ["/usr/sbin/runuser", "/sbin/runuser"] where FileManager.default.isExecutableFile(atPath: runuser) {
        return [runuser, "-u", "nobody", "--"]
    }
    return nil
}()

/// Runs `tandem ARGS…` as an unprivileged user (root would pass every permission check).
private func runTandemUnprivileged(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    let prefix = unprivileged ?? []
    let spawned = prefix.isEmpty ? try Spawned(arguments)
        : try Spawned(executable: prefix[0], Array(prefix.dropFirst()) + [tandemBinary] + arguments)
    let status = try spawned.wait()
    return (status, spawned.output.joined(separator: "\n"), spawned.stderr)
}
