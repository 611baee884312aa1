import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// `tandem init` checks and repairs Tandem's layout in an existing file; `tandem check` reports
/// it (and damaged pages) without changing anything.
@Suite struct LayoutCheckTests {
    let dir: TemporaryDirectory
    let schemaFile: String

    init() throws {
        dir = try TemporaryDirectory()
        schemaFile = dir.path("schema.json")
        try notesSchema.jsonData().write(to: URL(fileURLWithPath: schemaFile))
    }

    /// A database made by `tandem init` holding `rows` notes, written by the `tandem` binary.
    private func makeDatabase(_ name: String = "a.db", rows: Int = 3) throws -> String {
        let path = dir.path(name)
        #expect(try runTandem(["init", path, "--schema", schemaFile]).status == 0)
        let insert = try runTandem(["exec", path, """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
            INSERT INTO notes(id, title) SELECT 'row-' || i, printf('note %d, with some text to fill the pages', i) FROM n
            """, String(rows)])
        #expect(insert.status == 0, "\(insert.stderr)")
        return path
    }

    /// A view dropped (and its triggers with it), an index dropped and every counter deleted:
    /// `init` repairs each, says so, and later writes work with a transaction id past the queued ones.
    @Test func initRepairsAMissingViewTriggersIndexAndCounters() throws {
        let path = try makeDatabase()
        try sqlite(path, "DELETE FROM ps_state; DROP VIEW notes; DROP INDEX ps_index__notes__by_title")

        let result = try runTandem(["init", path, "--schema", schemaFile])
        #expect(result.status == 0, "\(result.stderr)")
        for repaired in ["repaired: view notes was missing", "repaired: the INSTEAD OF INSERT trigger of view notes was missing",
                         "repaired: the INSTEAD OF UPDATE trigger of view notes was missing",
                         "repaired: the INSTEAD OF DELETE trigger of view notes was missing",
                         "repaired: index by_title of notes was missing",
                         "repaired: Tandem's transaction counter (next_tx) was missing; set it to 2",
                         "repaired: Tandem's change counter (seq) was missing; set it to 0"] {
            #expect(result.stdout.contains(repaired), "\(result.stdout)")
        }
        #expect(result.stdout.contains("initialised"))

        let write = try runTandem(["exec", path, "INSERT INTO notes(id, title) VALUES ('after', 'repair')"])
        #expect(write.status == 0, "\(write.stderr)")
        let ids = try runTandem(["query", path, "SELECT count(DISTINCT tx_id) AS n, max(tx_id) AS newest FROM ps_crud", "--json"])
        #expect(ids.stdout == #"[{"n":2,"newest":2}]"#)
        let check = try runTandem(["check", path])
        #expect(check.status == 0 && check.stdout == "ok", "\(check.stdout) \(check.stderr)")
    }

    /// Counters that went back (next_tx below a queued transaction id, seq below a change stamp)
    /// are reported and moved forward.
    @Test func countersThatWentBackAreMovedForward() throws {
        let path = try makeDatabase()
        try sqlite(path, "UPDATE ps_state SET value = 0 WHERE key = 'next_tx'; UPDATE ps_state SET value = -5 WHERE key = 'seq'")
        let check = try runTandem(["check", path])
        #expect(check.status == 1)
        #expect(check.stdout.contains("Tandem's transaction counter (next_tx) is 0, below transaction 1 in the upload queue"), "\(check.stdout)")
        #expect(check.stdout.contains("Tandem's change counter (seq) is -5, below the newest change stamp 2"), "\(check.stdout)")
        let repair = try runTandem(["init", path, "--schema", schemaFile])
        #expect(repair.stdout.contains("repaired: Tandem's transaction counter (next_tx) was 0, below transaction 1 in the upload queue; set it to 2"),
                "\(repair.stdout)")
        #expect(repair.stdout.contains("repaired: Tandem's change counter (seq) was -5; set it to 2"), "\(repair.stdout)")
        // The repair's own commit took the next sequence number.
        #expect(try runTandem(["query", path, "SELECT value FROM ps_state WHERE key IN ('next_tx', 'seq') ORDER BY key", "--json"]).stdout
                == #"[{"value":2},{"value":3}]"#)
        #expect(try runTandem(["check", path]).stdout == "ok")
    }

    /// A data table with other columns cannot be repaired safely: `init` names it and changes
    /// nothing, not even what it could repair (the missing view stays missing).
    @Test func initRefusesADataTableWithTheWrongColumnsAndChangesNothing() throws {
        let path = try makeDatabase()
        try sqlite(path, "ALTER TABLE ps_data__notes ADD COLUMN extra; DROP VIEW notes")
        let result = try runTandem(["init", path, "--schema", schemaFile])
        #expect(result.status == 1)
        #expect(result.stderr.contains("the data table of notes has the wrong columns (expected id TEXT PRIMARY KEY, data TEXT; found id TEXT PRIMARY KEY, data TEXT, extra)"),
                "\(result.stderr)")
        #expect(!result.stderr.contains("ps_data__"), "\(result.stderr)")
        #expect(!result.stdout.contains("initialised"))
        #expect(try sqlite(path, "SELECT count(*) FROM sqlite_master WHERE name = 'notes'") == ["0"])
    }

    /// An upgrade refused for a name collision repairs nothing either.
    @Test func refusedUpgradeRepairsNothing() throws {
        let path = try makeDatabase()
        try sqlite(path, "DROP VIEW notes; CREATE TABLE other(a)")
        var upgraded = notesSchema
        upgraded.tables.append(TableSchema(name: "other", columns: [.text("b")]))
        let upgradedFile = dir.path("upgraded.json")
        try upgraded.jsonData().write(to: URL(fileURLWithPath: upgradedFile))
        let before = try runTandem(["check", path, "--json"]).stdout
        let result = try runTandem(["init", path, "--schema", upgradedFile])
        #expect(result.status == 1)
        #expect(result.stderr.contains("table 'other' collides with an existing table"), "\(result.stderr)")
        #expect(!result.stdout.contains("repaired"))
        #expect(try runTandem(["check", path, "--json"]).stdout == before)
        #expect(before.contains("view notes is missing"))
    }

    /// `check` lists what is wrong, marks what `init` can repair, exits 1, and repairs nothing.
    @Test func checkReportsLayoutProblemsWithoutRepairing() throws {
        let path = try makeDatabase()
        let sound = try runTandem(["check", path, "--json"])
        #expect(sound.status == 0 && sound.stdout == #"{"ok":true,"findings":[]}"#, "\(sound.stdout)")

        try sqlite(path, "DROP TRIGGER ps_view_delete__notes")
        let result = try runTandem(["check", path])
        #expect(result.status == 1)
        #expect(result.stdout == "the INSTEAD OF DELETE trigger of view notes is missing (repairable by `tandem init`)", "\(result.stdout)")
        #expect(result.stderr.contains("1 problem(s) found"), "\(result.stderr)")
        let json = try runTandem(["check", path, "--json"])
        #expect(json.stdout == #"{"ok":false,"findings":[{"problem":"the INSTEAD OF DELETE trigger of view notes is missing","repairable":true}]}"#)
        #expect(try sqlite(path, "SELECT count(*) FROM sqlite_master WHERE name = 'ps_view_delete__notes'") == ["0"])

        let findings = try SharedDatabase.check(path: path)
        #expect(findings.map(\.problem) == ["the INSTEAD OF DELETE trigger of view notes is missing"] && findings[0].isRepairable)
    }

    /// A changed view and an unreadable stored schema are findings too.
    @Test func checkReportsAChangedViewAndAnUnreadableSchema() throws {
        let path = try makeDatabase()
        try sqlite(path, "DROP VIEW notes; CREATE VIEW notes AS SELECT id FROM ps_data__notes")
        let changed = try runTandem(["check", path])
        #expect(changed.stdout.contains("view notes differs from the one the schema makes (repairable"), "\(changed.stdout)")
        try sqlite(path, "UPDATE ps_kv SET value = '{\"tables\":' WHERE key = 'schema'")
        let unreadable = try runTandem(["check", path])
        #expect(unreadable.status == 1)
        #expect(unreadable.stdout.contains("the stored schema cannot be read"), "\(unreadable.stdout)")
    }

    /// A page of the data table overwritten in the middle: `check` (and `check --full`) fails
    /// and names the damage.
    @Test func checkReportsACorruptPage() throws {
        let path = try makeDatabase(rows: 400)
        try sqlite(path, "PRAGMA wal_checkpoint(TRUNCATE)")
        let pageSize = try #require(Int(try sqlite(path, "PRAGMA page_size").first ?? ""))
        let root = try #require(Int(try sqlite(path, "SELECT rootpage FROM sqlite_master WHERE name = 'ps_data__notes'").first ?? ""))
        let pageCount = try #require(Int(try sqlite(path, "PRAGMA page_count").first ?? ""))
        #expect(root < pageCount && pageCount > 10, "page \(root) of \(pageCount)")
        #expect(try runTandem(["check", path]).status == 0)

        // The second half of the data table's root page: its cells, which point at its other pages.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64((root - 1) * pageSize + pageSize / 2))
        handle.write(Data(repeating: 0xFF, count: pageSize / 2))
        try handle.close()

        for options in [[], ["--full"]] {
            let result = try runTandem(["check", path] + options)
            #expect(result.status == 1, "\(options): \(result.stdout)")
            #expect(result.stdout.contains("page check:"), "\(options): \(result.stdout)")
            #expect(result.stderr.contains("problem(s) found in"), "\(options): \(result.stderr)")
        }
    }

    @Test func checkHasHelpAndIsListed() throws {
        let help = try runTandem(["check", "--help"])
        #expect(help.status == 0 && help.stdout.hasPrefix("Usage: tandem check DB [--full] [--json]"))
        #expect(try runTandem(["--help"]).stdout.contains("check"))
        let missing = try runTandem(["check", dir.path("missing.db")])
        #expect(missing.status == 1 && missing.stderr.contains("does not exist"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("missing.db")))
        try sqlite(dir.path("plain.db"), "CREATE TABLE t(a)")
        let plain = try runTandem(["check", dir.path("plain.db")])
        #expect(plain.status == 1 && plain.stdout.hasPrefix("it is not a Tandem database"), "\(plain.stdout)")
    }
}

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
        defer { _ = try? Spawned(executable: "/usr/bin/env", ["umount", "--lazy", mount]).wait() }
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
        let schema = Schema(tables: notesSchema.tables + [TableSchema(name: "secrets", columns: [.text("v")], localOnly: true)])
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
