import Foundation
import Testing
@testable import Tandem

/// Migrations across real processes: two versions of a program writing one file at the same
/// time, and the command line's plan, dry run and history.
@Suite struct MigrationProcessTests {
    /// The older program writes until the newer one migrates the file; its next write is refused
    /// naming both versions, and no row is written with the old layout after the migration.
    @Test func anOlderProgramStopsWritingOnceANewerOneMigratesTheFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let oldFile = try dir.schemaFile(MigrationTests.v1, name: "v1.json")
        let newFile = try dir.schemaFile(MigrationTests.v2, name: "v2.json")
        let old = try Spawned(testSupport: ["schema-writer", path, "--schema", oldFile, "INSERT INTO notes(id, title) VALUES ('old-' || ?1, 'old')"])
        _ = try old.waitForLine(timeout: 30, "the old program to write") { $0 == "wrote 20" }
        let new = try Spawned(testSupport: ["schema-writer", path, "--schema", newFile, "INSERT INTO notes(id, heading) VALUES ('new-' || ?1, 'new')"])
        _ = try new.waitForLine(timeout: 30, "the new program to write") { $0 == "wrote 20" }
        #expect(try old.wait(timeout: 30) == 3, "\(old.output.suffix(2)) \(old.stderr)")
        let refusal = try #require(old.output.last)
        #expect(refusal.contains("schema version 1 (last migration 'rename-title'), past this program's version 0"), "\(refusal)")
        new.signal(SIGTERM)
        _ = try new.wait(timeout: 30)

        let oldWrites = old.output.filter { $0.hasPrefix("wrote ") }.count
        let db = try SharedDatabase(path: path)
        defer { db.close() }
        // Every write the old program reported is there, under the new name; none was lost or
        // written past the migration with the old layout.
        let oldRows = try db.read { tx in try tx.scalar("SELECT count(*) FROM notes WHERE id LIKE 'old-%' AND heading = 'old'").int64Value }
        #expect(oldRows == Int64(oldWrites))
        #expect(try db.read { tx in try tx.scalar("SELECT count(*) FROM notes WHERE heading IS NULL").int64Value } == 0)
        #expect(try db.read { tx in try tx.scalar("SELECT count(*) FROM ps_data__notes WHERE json_type(data, '$.title') IS NOT NULL").int64Value } == 0)
    }

    /// A writer whose busy timeout runs out while another process migrates waits for the
    /// migration to end, saying so, instead of failing with SQLITE_BUSY.
    @Test func aWriterWaitsForAMigrationInsteadOfFailingBusy() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        #expect(try tandem(["init", path, "--schema", try dir.schemaFile(MigrationTests.v1, name: "v1.json")]).status == 0)
        // A migration that takes a few seconds: a long recursive count in an SQL step.
        let slow = Migration(
            "slow", uploads: .none,
            steps: [.sql("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000000) SELECT count(*) FROM c")])
        let migrate = try Spawned(["migrate", path, "--schema", try dir.schemaFile(Schema(tables: MigrationTests.v1.tables, migrations: [slow]), name: "v2.json")])
        let lockFile = try FileLock(path: path + "-write.lock", mode: 0o600)
        let record = try WriteLockRecord.Shared.map(fd: lockFile.fd, path: path + "-write.lock")
        defer { record.unmap() }
        try waitUntil(timeout: 30, "the migration to hold the write lock") { record[\.migrating] == Int64(migrate.pid) || !migrate.isRunning }
        #expect(migrate.isRunning, "the migration ended before a writer could wait for it; make it slower")
        let writer = try tandem(["exec", path, "--busy-timeout", "200ms", "INSERT INTO notes(id, title) VALUES ('late', 'x')"])
        #expect(writer.status == 0, "\(writer.stderr)")
        #expect(writer.stderr.contains("waiting for process \(migrate.pid), which is migrating the schema"), "\(writer.stderr)")
        #expect(try migrate.wait(timeout: 60) == 0, "\(migrate.stderr)")
        #expect(record[\.migrating] == 0)
    }

    @Test func migratePrintsThePlanRunsItAndSchemaListsTheHistory() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        #expect(try tandem(["init", path, "--schema", try dir.schemaFile(MigrationTests.v1, name: "v1.json")]).status == 0)
        #expect(try tandem(["exec", path, "INSERT INTO notes(id, title, n) VALUES ('a', 'A', 1), ('b', 'B', 2), ('c', 'C', 3)"]).status == 0)
        let fix = Migration("fix", uploads: .changes, steps: [.fill(table: "notes", column: "n", value: "n * 10", where: "n > 1")])
        let drop = Migration("drop-r", uploads: .none, steps: [.dropColumn(table: "notes", column: "r", discardValues: true)])
        let v2 = Schema(
            tables: [TableSchema(name: "notes", columns: [.text("heading"), .integer("n")], indexes: [IndexSchema(name: "by_text", columns: ["heading"])])],
            migrations: [MigrationTests.rename, fix, drop])
        let file = try dir.schemaFile(v2, name: "v2.json")

        let plan = try tandem(["migrate", path, "--schema", file, "--dry-run"])
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("schema version 0 → 3"), "\(plan.stdout)")
        #expect(plan.stdout.contains("rename-title: rename column notes.title to heading: 3 rows written"), "\(plan.stdout)")
        #expect(plan.stdout.contains("fix: fill notes.n with n * 10 where n > 1: 2 rows written, 2 changes queued for upload"), "\(plan.stdout)")
        #expect(plan.stdout.contains("drop-r: drop column notes.r: 3 rows written, 3 rows leave this host"), "\(plan.stdout)")
        #expect(plan.stdout.contains("dry run: nothing was changed"))
        let v3 = Schema(
            tables: v2.tables.map {
                var t = $0; t.columns.append(.real("weight")); return t
            }, migrations: v2.migrations)
        let plan3 = try tandem(["migrate", path, "--schema", try dir.schemaFile(v3, name: "v3.json"), "--dry-run"])
        #expect(plan3.stdout.contains("then notes: new column weight (real, reads NULL until written)"), "\(plan3.stdout)")
        #expect(try tandem(["schema", path, "--history"]).stdout == "schema version 0")
        #expect(try tandem(["query", path, "SELECT title FROM notes WHERE id = 'a'"]).stdout.contains("A"))

        let run = try tandem(["migrate", path, "--schema", file, "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        #expect(report?["to_version"] as? Int == 3 && (report?["ran"] as? [String]) == ["rename-title", "fix", "drop-r"], "\(run.stdout)")

        #expect(try tandem(["status", path]).stdout.contains("schema version:  3 (last migration 'drop-r')"))
        #expect(try tandem(["status", path, "--json"]).stdout.contains("\"schema_version\":3,\"last_migration\":\"drop-r\""))
        let history = try tandem(["schema", path, "--history"])
        #expect(history.status == 0)
        let lines = history.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "schema version 3" && lines.count == 4, "\(history.stdout)")
        #expect(lines.dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true)[1] } == ["rename-title", "fix", "drop-r"])
        #expect(try tandem(["query", path, "SELECT n FROM notes ORDER BY id", "--json"]).stdout.contains("[{\"n\":1},{\"n\":20},{\"n\":30}]"))

        // Running it again does nothing; an older list is refused, changing nothing.
        #expect(try tandem(["migrate", path, "--schema", file]).stdout.contains("nothing to migrate"))
        let older = try tandem(["migrate", path, "--schema", try dir.schemaFile(MigrationTests.v2, name: "older.json")])
        #expect(older.status != 0 && older.stderr.contains("past this program's version 1"), "\(older.stderr)")
    }

    @Test func badMigrationFilesAreRefusedWithTheirFault() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        #expect(try tandem(["init", path, "--schema", try dir.schemaFile(MigrationTests.v1, name: "v1.json")]).status == 0)
        let tables = String(decoding: Schema(tables: MigrationTests.v1.tables).jsonData(), as: UTF8.self).dropFirst().dropLast()
        let cases: [(String, String)] = [
            (#"[{"id":"a","steps":[]}]"#, "say whether its changes upload"),
            (#"[{"id":"a","uploads":"maybe","steps":[]}]"#, "\"uploads\" is \"none\" or \"changes\""),
            (#"[{"id":"a","uploads":"none","steps":[{"renameColumn":{"table":"notes","from":"title"}}]}]"#, "needs \"to\""),
            (#"[{"id":"a","uploads":"none","steps":[{"rename":{}}]}]"#, "the step's kind"),
            (#"[{"id":"a","uploads":"none","steps":[{"renameColumn":{"table":"notes","from":"title","to":"x","extra":1}}]}]"#, "unknown key 'extra'"),
            (#"[{"id":"a","uploads":"none","steps":[{"renameColumn":{"table":"nope","from":"title","to":"x"}}]}]"#, "no table 'nope'"),
            (#"[{"id":"a","uploads":"none","steps":[{"fill":{"table":"notes","column":"n","value":"1); DELETE FROM notes; SELECT (1"}}]}]"#, "fill notes.n"),
            (#"[{"id":"a","uploads":"none","steps":[{"fill":{"table":"notes","column":"n","value":"'x'"}}]}]"#, "row 'keep'"),
            (#"[{"id":"a","uploads":"none","steps":[{"sql":"DELETE FROM ps_crud"}]}]"#, "Tandem's upload queue"),
            (#"[{"id":"a","uploads":"none","steps":[{"dropColumn":{"table":"notes","column":"n"}}]}]"#, "discardValues"),
            (#"[{"id":"a","uploads":"none","steps":[]},{"id":"a","uploads":"none","steps":[]}]"#, "two migrations have the id 'a'"),
            (#"[{"id":"a","uploads":"none","steps":[],"server":"UPDATE notes SET n = 1"}]"#, "migrations[0].server"),
        ]
        #expect(try tandem(["exec", path, "INSERT INTO notes(id, title) VALUES ('keep', 'me')"]).status == 0)
        for (migrations, expected) in cases {
            let file = dir.path("bad.json")
            try Data("{\(tables),\"migrations\":\(migrations)}".utf8).write(to: URL(fileURLWithPath: file))
            let result = try tandem(["migrate", path, "--schema", file])
            #expect(result.status != 0 && result.stderr.contains(expected), "\(migrations): \(result.stderr)")
        }
        #expect(try tandem(["query", path, "SELECT count(*) AS n FROM notes", "--json"]).stdout.contains("[{\"n\":1}]"))
        #expect(try tandem(["schema", path, "--history"]).stdout == "schema version 0")
    }
}
