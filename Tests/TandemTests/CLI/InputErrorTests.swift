import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// Bad and unusual input: clear errors, nothing committed, nothing changed.
@Suite struct InputErrorTests {
    let dir: TemporaryDirectory
    let db: SharedDatabase

    init() throws {
        dir = try TemporaryDirectory()
        db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
    }

    @Test func transactionControlInsideATransactionIsRefusedAndNothingCommits() throws {
        let result = try tandem(["exec", db.path, "INSERT INTO notes(title) VALUES ('c1'); COMMIT; INSERT INTO notes(title) VALUES ('c2')"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("BEGIN, COMMIT, END and ROLLBACK are not allowed inside a Tandem transaction"), "\(result.stderr)")
        #expect(try count(db, "SELECT count(*) FROM notes") == 0)
        #expect(try count(db, "SELECT count(*) FROM ps_crud") == 0)
        #expect(throws: TandemError.self) { try db.read { try $0.execute("ROLLBACK") } }
        try db.write { tx in
            try tx.execute("SAVEPOINT s; INSERT INTO notes(title) VALUES ('kept'); RELEASE s")
        }
        #expect(try count(db, "SELECT count(*) FROM notes") == 1)
    }

    @Test func ignoredInsertQueuesNothing() throws {
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'A'); INSERT INTO notes(id, title) VALUES ('b', 'B')")
        try db.execute("INSERT OR IGNORE INTO notes(id, title) VALUES ('a', 'ignored')")
        #expect(try db.uploadQueue.transactions(limit: 10).flatMap(\.entries).map(\.rowID) == ["a", "b"])
        try db.execute("INSERT OR REPLACE INTO notes(id, title) VALUES ('a', 'replaced')")
        let last = try #require(try db.uploadQueue.transactions(limit: 10).last?.entries.last)
        #expect(last.op == .put && last.rowID == "a" && last.data?["title"] == .string("replaced"))
    }

    @Test func aClientSyncsWithOneBackendOnly() throws {
        let first = "sqlite:" + dir.path("first.db"), second = "sqlite:" + dir.path("second.db")
        #expect(try tandem(["sync", db.path, "--backend", first]).status == 0)
        let switched = try tandem(["sync", db.path, "--backend", second])
        #expect(switched.status == 1)
        #expect(switched.stderr.contains("syncs with another backend (\(first)) and cannot switch"), "\(switched.stderr)")
    }

    @Test func closedOutputPipeEndsQuietly() throws {
        let child = try Subprocess.spawn(
            tandemBinary,
            [
                "query", db.path,
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000) SELECT x FROM c",
            ])
        close(child.stdoutFD)
        var stderr = [UInt8](repeating: 0, count: 4096)
        let n = read(child.stderrFD, &stderr, stderr.count)
        close(child.stderrFD)
        #expect(child.wait() == 141)
        #expect(n <= 0, "printed to stderr: \(String(decoding: stderr.prefix(max(0, n)), as: UTF8.self))")
    }

    @Test func pathsThatAreNotRegularFilesAreRefused() throws {
        let fifo = dir.path("fifo.db")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: TandemError.cannotOpen(path: fifo, reason: "it is not a regular file (a FIFO, socket or device)")) {
            try SharedDatabase(path: fifo, schema: notesSchema)
        }
        #expect(throws: TandemError.cannotOpen(path: dir.url.path, reason: "it is a directory, not a database file")) {
            try SharedDatabase(path: dir.url.path, schema: notesSchema)
        }
        #expect(throws: TandemError.cannotOpen(path: "", reason: "the path is empty")) { try SharedDatabase(path: "", schema: notesSchema) }
    }

    @Test func aSymlinkedPathSharesTheTargetsSidecars() throws {
        let link = dir.path("link.db")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "a.db")
        let viaLink = try SharedDatabase(path: link)
        #expect(viaLink.path == db.path)
        #expect(!FileManager.default.fileExists(atPath: link + "-notify"))
    }

    @Test func openingANonTandemDatabaseChangesNothing() throws {
        let plain = dir.path("plain.db")
        let create = try Spawned(executable: "/usr/bin/sqlite3", [plain, "CREATE TABLE x(a)"])
        try create.wait()
        let result = try tandem(["exec", plain, "INSERT INTO x VALUES (1)"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("has no Tandem schema"))
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("plain.db") }
        #expect(files == ["plain.db"])
    }

    @Test func unknownSchemaKeysAreRejected() {
        #expect(
            throws: TandemError.invalidSchema(
                SchemaProblem(.unknownKey, table: "secrets", "table 'secrets': unknown key 'localonly' (known keys: name, columns, indexes, localOnly, insertOnly, scope, search)"))
        ) {
            try Schema(json: Data(#"{"tables":[{"name":"secrets","columns":[{"name":"v","type":"text"}],"localonly":true}]}"#.utf8))
        }
    }

    @Test func idleDatabaseReportsNoChanges() throws {
        let changes = try Spawned(["changes", db.path, "--json"])
        try changes.waitForLine("ready") { $0.contains("ready") }
        // About time: over two backstop polls (1 s each) an idle database reports nothing.
        _ = try? changes.waitForLine(timeout: 2.5, "a phantom change") { !$0.contains("ready") }
        #expect(changes.output == [#"{"ready":true}"#])
        changes.signal(SIGTERM)
    }

    @Test func extraArgumentsAndHelpAfterTheSeparator() throws {
        let extra = try tandem(["crud", db.path, "extra"])
        #expect(extra.status == 2)
        #expect(extra.stderr.contains("unexpected argument 'extra'"))
        let literal = try tandem(["exec", db.path, "INSERT INTO notes(title) VALUES (?)", "--", "--help"])
        #expect(literal.status == 0)
        #expect(try db.fetchAll("SELECT title FROM notes").first?[0] == .text("--help"))
        #expect(try tandem(["query", db.path, "SELECT 1", "-h"]).stdout.hasPrefix("Usage: tandem query"))
    }

    @Test func aTrailingCommentIsNotASecondStatement() throws {
        #expect(try tandem(["query", db.path, "SELECT 1 AS one; -- a comment", "--json"]).stdout == #"[{"one":1}]"#)
        let two = try tandem(["query", db.path, "SELECT 1; SELECT 2"])
        #expect(two.status == 1 && two.stderr.contains("only one statement is allowed here"))
    }

    @Test func aPlainSQLiteFileIsRefusedAsABackendAndLeftUntouched() throws {
        let plain = dir.path("plain.db")
        let create = try Spawned(executable: "/usr/bin/sqlite3", [plain, "CREATE TABLE q(a)"])
        try create.wait()
        let before = try Data(contentsOf: URL(fileURLWithPath: plain))
        let result = try tandem(["sync", db.path, "--backend", "sqlite:" + plain])
        #expect(result.status == 1 && result.stderr.contains("is an SQLite database but not a Tandem backend"), "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: plain)) == before)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("plain.db") }
        #expect(files == ["plain.db"])
    }

    @Test func tableOutputKeepsCharactersOutsideTheBasicPlane() {
        let text = Output.table([Row(columns: ["v"], values: [.text("ab🎉cd")])])
        #expect(text.contains("ab🎉cd"))
    }
}
