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
        schemaFile = try dir.schemaFile()
    }

    /// A database made by `tandem init` holding `rows` notes, written by the `tandem` binary.
    private func makeDatabase(_ name: String = "a.db", rows: Int = 3) throws -> String {
        let path = dir.path(name)
        #expect(try tandem(["init", path, "--schema", schemaFile]).status == 0)
        let insert = try runTandem([
            "exec", path,
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
            INSERT INTO notes(id, title) SELECT 'row-' || i, printf('note %d, with some text to fill the pages', i) FROM n
            """, String(rows),
        ])
        #expect(insert.status == 0, "\(insert.stderr)")
        return path
    }

    /// A view dropped (and its triggers with it), an index dropped and every counter deleted:
    /// `init` repairs each, says so, and later writes work with a transaction id past the queued ones.
    @Test func initRepairsAMissingViewTriggersIndexAndCounters() throws {
        let path = try makeDatabase()
        try sqlite(path, "DELETE FROM ps_state; DROP VIEW notes; DROP INDEX ps_index__notes__by_title")

        let result = try tandem(["init", path, "--schema", schemaFile])
        #expect(result.status == 0, "\(result.stderr)")
        for repaired in [
            "repaired: view notes was missing", "repaired: the INSTEAD OF INSERT trigger of view notes was missing",
            "repaired: the INSTEAD OF UPDATE trigger of view notes was missing",
            "repaired: the INSTEAD OF DELETE trigger of view notes was missing",
            "repaired: index by_title of notes was missing",
            "repaired: Tandem's transaction counter (next_tx) was missing; set it to 2",
            "repaired: Tandem's change counter (seq) was missing; set it to 0",
        ] {
            #expect(result.stdout.contains(repaired), "\(result.stdout)")
        }
        #expect(result.stdout.contains("initialised"))

        let write = try tandem(["exec", path, "INSERT INTO notes(id, title) VALUES ('after', 'repair')"])
        #expect(write.status == 0, "\(write.stderr)")
        let ids = try tandem(["query", path, "SELECT count(DISTINCT tx_id) AS n, max(tx_id) AS newest FROM ps_crud", "--json"])
        #expect(ids.stdout == #"[{"n":2,"newest":2}]"#)
        let check = try tandem(["check", path])
        #expect(check.status == 0 && check.stdout == "ok", "\(check.stdout) \(check.stderr)")
    }

    /// Counters that went back (next_tx below a queued transaction id, seq below a change stamp)
    /// are reported and moved forward.
    @Test func countersThatWentBackAreMovedForward() throws {
        let path = try makeDatabase()
        try sqlite(path, "UPDATE ps_state SET value = 0 WHERE key = 'next_tx'; UPDATE ps_state SET value = -5 WHERE key = 'seq'")
        let check = try tandem(["check", path])
        #expect(check.status == 1)
        #expect(check.stdout.contains("Tandem's transaction counter (next_tx) is 0, below transaction 1 in the upload queue"), "\(check.stdout)")
        #expect(check.stdout.contains("Tandem's change counter (seq) is -5, below the newest change stamp 2"), "\(check.stdout)")
        let repair = try tandem(["init", path, "--schema", schemaFile])
        #expect(
            repair.stdout.contains("repaired: Tandem's transaction counter (next_tx) was 0, below transaction 1 in the upload queue; set it to 2"),
            "\(repair.stdout)")
        #expect(repair.stdout.contains("repaired: Tandem's change counter (seq) was -5; set it to 2"), "\(repair.stdout)")
        // The repair's own commit took the next sequence number.
        #expect(
            try tandem(["query", path, "SELECT value FROM ps_state WHERE key IN ('next_tx', 'seq') ORDER BY key", "--json"]).stdout
                == #"[{"value":2},{"value":3}]"#)
        #expect(try tandem(["check", path]).stdout == "ok")
    }

    /// A data table with other columns cannot be repaired safely: `init` names it and changes
    /// nothing, not even what it could repair (the missing view stays missing).
    @Test func initRefusesADataTableWithTheWrongColumnsAndChangesNothing() throws {
        let path = try makeDatabase()
        try sqlite(path, "ALTER TABLE ps_data__notes ADD COLUMN extra; DROP VIEW notes")
        let result = try tandem(["init", path, "--schema", schemaFile])
        #expect(result.status == 1)
        #expect(
            result.stderr.contains("the data table of notes has the wrong columns (expected id TEXT PRIMARY KEY, data TEXT; found id TEXT PRIMARY KEY, data TEXT, extra)"),
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
        let before = try tandem(["check", path, "--json"]).stdout
        let result = try tandem(["init", path, "--schema", upgradedFile])
        #expect(result.status == 1)
        #expect(result.stderr.contains("table 'other' collides with an existing table"), "\(result.stderr)")
        #expect(!result.stdout.contains("repaired"))
        #expect(try tandem(["check", path, "--json"]).stdout == before)
        #expect(before.contains("view notes is missing"))
    }

    /// `check` lists what is wrong, marks what `init` can repair, exits 1, and repairs nothing.
    @Test func checkReportsLayoutProblemsWithoutRepairing() throws {
        let path = try makeDatabase()
        let sound = try tandem(["check", path, "--json"])
        #expect(sound.status == 0 && sound.stdout == #"{"ok":true,"findings":[]}"#, "\(sound.stdout)")

        try sqlite(path, "DROP TRIGGER ps_view_delete__notes")
        let result = try tandem(["check", path])
        #expect(result.status == 1)
        #expect(result.stdout == "the INSTEAD OF DELETE trigger of view notes is missing (repairable by `tandem init`)", "\(result.stdout)")
        #expect(result.stderr.contains("1 problem(s) found"), "\(result.stderr)")
        let json = try tandem(["check", path, "--json"])
        #expect(json.stdout == #"{"ok":false,"findings":[{"problem":"the INSTEAD OF DELETE trigger of view notes is missing","repairable":true}]}"#)
        #expect(try sqlite(path, "SELECT count(*) FROM sqlite_master WHERE name = 'ps_view_delete__notes'") == ["0"])

        let findings = try SharedDatabase.check(path: path)
        #expect(findings.map(\.problem) == ["the INSTEAD OF DELETE trigger of view notes is missing"] && findings[0].isRepairable)
    }

    /// A changed view and an unreadable stored schema are findings too.
    @Test func checkReportsAChangedViewAndAnUnreadableSchema() throws {
        let path = try makeDatabase()
        try sqlite(path, "DROP VIEW notes; CREATE VIEW notes AS SELECT id FROM ps_data__notes")
        let changed = try tandem(["check", path])
        #expect(changed.stdout.contains("view notes differs from the one the schema makes (repairable"), "\(changed.stdout)")
        try sqlite(path, "UPDATE ps_kv SET value = '{\"tables\":' WHERE key = 'schema'")
        let unreadable = try tandem(["check", path])
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
        #expect(try tandem(["check", path]).status == 0)

        // The second half of the data table's root page: its cells, which point at its other pages.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64((root - 1) * pageSize + pageSize / 2))
        handle.write(Data(repeating: 0xFF, count: pageSize / 2))
        try handle.close()

        for options in [[], ["--full"]] {
            let result = try tandem(["check", path] + options)
            #expect(result.status == 1, "\(options): \(result.stdout)")
            #expect(result.stdout.contains("page check:"), "\(options): \(result.stdout)")
            #expect(result.stderr.contains("problem(s) found in"), "\(options): \(result.stderr)")
        }
    }

    @Test func checkHasHelpAndIsListed() throws {
        let help = try tandem(["check", "--help"])
        #expect(help.status == 0 && help.stdout.hasPrefix("Usage: tandem check DB [--full] [--json]"))
        #expect(try tandem(["--help"]).stdout.contains("check"))
        let missing = try tandem(["check", dir.path("missing.db")])
        #expect(missing.status == 1 && missing.stderr.contains("does not exist"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("missing.db")))
        try sqlite(dir.path("plain.db"), "CREATE TABLE t(a)")
        let plain = try tandem(["check", dir.path("plain.db")])
        #expect(plain.status == 1 && plain.stdout.hasPrefix("it is not a Tandem database"), "\(plain.stdout)")
    }
}
