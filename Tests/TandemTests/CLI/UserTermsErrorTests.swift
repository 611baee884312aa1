import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// Errors in the user's terms: the table, the id, the directory; output that cannot drive the terminal.
@Suite struct UserTermsErrorTests {
    let dir: TemporaryDirectory

    init() throws { dir = try TemporaryDirectory() }

    /// A duplicate id through a view names the table and the id, not the data table behind it.
    @Test func duplicateIDNamesTheTableAndTheID() throws {
        let schema = Schema(tables: notesSchema.tables + [TableSchema(name: "secrets", columns: [.text("v")], localOnly: true)])
        let db = try SharedDatabase(path: dir.path("a.db"), schema: schema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('x', 'first'); INSERT INTO secrets(id, v) VALUES ('s', 'v')")

        for (sql, arguments) in [
            ("INSERT INTO notes(id, title) VALUES ('x', 'again')", [String]()),
            ("INSERT INTO notes(id, title) VALUES (?, ?)", ["x", "again"]),
        ] {
            let result = try tandem(["exec", db.path, sql] + arguments)
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
        let copied = try tandem(["exec", db.path, "INSERT INTO notes(id) SELECT id FROM notes"])
        #expect(copied.stderr.contains("a row with that id already exists in table notes"), "\(copied.stderr)")
        // OR REPLACE and OR IGNORE keep working.
        #expect(try tandem(["exec", db.path, "INSERT OR REPLACE INTO notes(id, title) VALUES ('x', 'replaced')"]).status == 0)
        #expect(try tandem(["exec", db.path, "INSERT OR IGNORE INTO notes(id, title) VALUES ('x', 'ignored')"]).status == 0)
        #expect(try db.fetchAll("SELECT title FROM notes WHERE id = 'x'").first?[0] == .text("replaced"))
    }

    /// A directory this user may not write: the error names it, whether the database is to be
    /// created there or exists without its -wal and -shm files.
    @Test(.enabled(if: unprivileged != nil, "needs setpriv or runuser to run tandem as an unprivileged user"))
    func unwritableDirectoryIsNamed() throws {
        let schemaFile = try dir.schemaFile()
        let locked = dir.path("locked")
        try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
        #expect(try tandem(["init", locked + "/existing.db", "--schema", schemaFile]).status == 0)
        try sqlite(locked + "/existing.db", "PRAGMA wal_checkpoint(TRUNCATE)")  // the last connection removes -wal and -shm
        for name in try FileManager.default.contentsOfDirectory(atPath: locked) { chown(locked + "/" + name, 65534, 65534) }
        chmod(locked, 0o555)
        let before = try listing(locked)

        for command in [
            ["init", locked + "/new.db", "--schema", schemaFile], ["query", locked + "/existing.db", "SELECT 1"],
            ["exec", locked + "/existing.db", "INSERT INTO notes(title) VALUES ('x')"],
        ] {
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
        let result = try tandem(["sync", db.path, "--backend", "sqlite:" + server])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot use '\(server)' as the backend file: it is a directory"), "\(result.stderr)")
        #expect(!result.stderr.contains("disk I/O error"), "\(result.stderr)")
    }

    /// Table output shows control characters as escapes; JSON output is unchanged.
    @Test func tableOutputEscapesControlCharacters() throws {
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let title = "a\nb\tc\rd\u{1B}[31me\u{7F}f\u{01}g\u{9B}h"
        try db.execute("INSERT INTO notes(id, title) VALUES ('t', ?)", [title])

        let table = try tandem(["query", db.path, "SELECT title AS \"x\ny\" FROM notes"])
        #expect(table.status == 0)
        #expect(table.stdout.contains(#"a\nb\tc\rd\x1b[31me\x7ff\x01g\x9bh"#), "\(table.stdout)")
        #expect(table.stdout.contains(#"x\ny"#), "\(table.stdout)")
        #expect(!table.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value) })
        #expect(table.stdout.split(separator: "\n").count == 4, "\(table.stdout)")

        let json = try tandem(["query", db.path, "SELECT title FROM notes", "--json"])
        let decoded = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: String]]
        #expect(decoded == [["title": title]])
    }
}
