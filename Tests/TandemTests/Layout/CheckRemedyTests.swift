import Foundation
import Testing
@testable import Tandem

/// `tandem check` knows every table Tandem makes as Tandem's, and none of its remedies loses
/// data: a table in Tandem's way is renamed, never dropped.
@Suite struct CheckRemedyTests {
    /// Every `CREATE TABLE` of a `ps_` table in the library's sources names a table
    /// ``LayoutCheck/ownTables`` lists, so `check` never takes one of them for another program's.
    @Test func everyTableTandemCreatesIsRecognisedAsTandems() throws {
        let root = HouseRulesTests.root.appendingPathComponent("Sources/Tandem")
        let files = try #require(FileManager.default.enumerator(atPath: root.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        let own = Set(LayoutCheck.ownTables.map(\.name))
        var created: Set<String> = []
        for file in files {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: /CREATE (?:TEMP |TEMPORARY )?TABLE (?:IF NOT EXISTS )?"?(ps_[a-z_]+)/) {
                created.insert(String(match.output.1))
            }
        }
        #expect(created.contains(InternalTables.rejected), "the scan finds the set-aside table: \(created)")
        #expect(created.subtracting(own).isEmpty, "tables Tandem creates that check does not know: \(created.subtracting(own))")
    }

    /// Once uploads were set aside, and after they are discarded, `check` says ok.
    @Test func checkPassesWithSetAsideUploadsAndAfterDiscardingThem() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        do {
            let db = try SharedDatabase(path: path, schema: notesSchema)
            try db.execute("INSERT INTO notes(id, title) VALUES ('bad-1', 'x')")
            try db.execute("INSERT INTO notes(id, title) VALUES ('ok-1', 'x')")
            _ = try db.sync.once(with: RefusingBackend())
            #expect(try db.uploadQueue.rejected().count == 1)
            db.close()
        }
        let set = try tandem(["check", path])
        #expect(set.status == 0, "with a set-aside upload: \(set.stdout) \(set.stderr)")
        #expect(try tandem(["crud", path, "--discard", "all"]).status == 0)
        let discarded = try tandem(["check", path])
        #expect(discarded.status == 0, "after discarding it: \(discarded.stdout) \(discarded.stderr)")
        let full = try tandem(["check", path, "--full"])
        #expect(full.status == 0, "\(full.stdout) \(full.stderr)")
    }

    /// What other programs put where Tandem needs the name: every remedy `check` prints keeps the
    /// rows; only objects that hold none (views, indexes, triggers) may be dropped, said with the
    /// statement.
    @Test func noRemedyAdvisesDroppingData() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        #expect(try tandem(["init", path, "--schema", try dir.schemaFile()]).status == 0)
        try sqliteShell(
            path,
            """
            CREATE TABLE ps_mine(a); INSERT INTO ps_mine VALUES (1);
            CREATE TABLE mine(a); CREATE VIEW ps_myview AS SELECT 1; CREATE INDEX ps_myindex ON mine(a);
            CREATE TRIGGER ps_mytrigger AFTER INSERT ON mine BEGIN SELECT 1; END;
            DROP VIEW notes; CREATE TABLE notes(x); INSERT INTO notes VALUES (1);
            """)
        let check = try tandem(["check", path])
        #expect(check.status == 1)
        let lines = (check.stdout + "\n" + check.stderr).split(separator: "\n").map(String.init)
        for name in ["ps_mine", "view notes is a table"] {
            #expect(lines.contains { $0.contains(name) && $0.contains("rename it to keep its rows") }, "\(name): \(lines)")
        }
        for name in ["ps_myview", "ps_myindex", "ps_mytrigger"] {
            #expect(lines.contains { $0.contains(name) }, "\(name) is reported: \(lines)")
        }
        for line in lines where line.lowercased().contains("drop") {
            #expect(!line.uppercased().contains("DROP TABLE"), "\(line)")
            #expect(["DROP VIEW", "DROP INDEX", "DROP TRIGGER"].contains { line.contains($0) }, "a drop only of what holds no rows, with its statement: \(line)")
        }
    }
}
