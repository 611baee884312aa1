import Foundation
import Testing
@testable import Tandem

/// `tandem search`, `tandem watch --search`, and `tandem check`/`init` on a search index that
/// drifted from its rows.
@Suite struct SearchCommandTests {
    @Test func searchPrintsTheMatchesBestFirst() throws {
        let dir = try TemporaryDirectory()
        let schema = try dir.schemaFile(searchSchema)
        let path = dir.path("a.db")
        #expect(try tandem(["init", path, "--schema", schema]).status == 0)
        #expect(
            try tandem(["exec", path, "INSERT INTO searched_notes(id, title, body, pinned) VALUES ('a', 'milk', 'milk milk', 1), ('b', 'tea', 'a little milk', 0)"])
                .status == 0)
        let all = try tandem(["search", path, "searched_notes", "milk", "--mode", "ndjson", "--snippet", "body"])
        #expect(all.status == 0, "\(all.stderr)")
        let lines = all.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].contains(#""id":"a""#) && lines[1].contains(#""search_snippet":"a little [milk]""#), "\(all.stdout)")
        let filtered = try tandem(["search", path, "searched_notes", "milk", "--where", "pinned = ?", "0", "--mode", "csv"])
        #expect(filtered.stdout.hasPrefix("id,title,body,pinned,search_rank,search_snippet\r\n") && filtered.stdout.contains("\r\nb,tea,"), "\(filtered.stdout)")
        let none = try tandem(["search", path, "searched_notes", "coffee", "--mode", "csv"])
        #expect(
            none.status == 0 && none.stdout.split(whereSeparator: \.isNewline) == ["id,title,body,pinned,search_rank,search_snippet"],
            "columns even for no rows: \(none.stdout.debugDescription)")
        let bad = try tandem(["search", path, "searched_notes", #"milk "bread"#, "--fts5"])
        #expect(bad.status != 0 && bad.stderr.contains("not closed") && bad.stderr.contains("at character 6"), "\(bad.stderr)")
        #expect(!bad.stderr.contains("fts5") && !bad.stderr.contains("ps_"), "in the user's terms: \(bad.stderr)")
        let unknown = try tandem(["search", path, "notes", "milk"])
        #expect(unknown.status != 0 && unknown.stderr.contains("'notes' is not a declared table"), "\(unknown.stderr)")
    }

    @Test func checkFindsADriftedIndexAndInitRepairsIt() throws {
        let dir = try TemporaryDirectory()
        let schema = try dir.schemaFile(searchSchema)
        let path = dir.path("a.db")
        #expect(try tandem(["init", path, "--schema", schema]).status == 0)
        #expect(try tandem(["exec", path, "INSERT INTO searched_notes(id, title) VALUES ('a', 'milk')"]).status == 0)
        #expect(try tandem(["check", path]).status == 0)
        // A writer that bypasses the index: its trigger dropped in the sqlite3 shell.
        let shell = try Spawned(
            executable: "/usr/bin/sqlite3",
            [path, "DROP TRIGGER ps_search_insert__searched_notes; INSERT INTO searched_notes(id, title) VALUES ('b', 'more milk');"])
        #expect(try shell.wait() == 0)
        let check = try tandem(["check", path])
        #expect(check.status != 0, "\(check.stdout)")
        #expect(check.stdout.contains("the search index of searched_notes differs from the rows' text in 1 place"), "\(check.stdout)")
        let repair = try tandem(["init", path, "--schema", schema])
        #expect(repair.status == 0 && repair.stdout.contains("repaired: the search index of searched_notes"), "\(repair.stdout) \(repair.stderr)")
        #expect(try tandem(["check", path]).status == 0)
        let found = try tandem(["search", path, "searched_notes", "milk", "--mode", "csv"])
        #expect(found.stdout.contains("\na,") && found.stdout.contains("\nb,"), "\(found.stdout)")
    }

    /// FTS5's own tables damaged in the sqlite3 shell (a table dropped, its settings deleted):
    /// `check` says the index cannot be read, `init` makes it again from the rows.
    @Test(arguments: [
        "DELETE FROM ps_search__searched_notes__fts_config", "DROP TABLE ps_search__searched_notes__fts_data",
        "DROP TABLE ps_search__searched_notes__fts_content", "DROP TABLE ps_search__searched_notes__fts_idx",
    ])
    func initRebuildsAnIndexFTS5CannotRead(damage: String) throws {
        let dir = try TemporaryDirectory()
        let schema = try dir.schemaFile(searchSchema)
        let path = dir.path("a.db")
        #expect(try tandem(["init", path, "--schema", schema]).status == 0)
        #expect(try tandem(["exec", path, "INSERT INTO searched_notes(id, title) VALUES ('a', 'milk'), ('b', 'bread')"]).status == 0)
        #expect(try Spawned(executable: "/usr/bin/sqlite3", [path, damage]).wait() == 0)
        let check = try tandem(["check", path])
        #expect(check.status != 0 && check.stdout.contains("the search index of searched_notes"), "\(check.stdout)")
        let repair = try tandem(["init", path, "--schema", schema])
        #expect(repair.status == 0 && repair.stdout.contains("repaired: the search index of searched_notes"), "\(repair.stdout) \(repair.stderr)")
        #expect(try tandem(["check", path]).status == 0)
        let found = try tandem(["search", path, "searched_notes", "milk", "--mode", "csv"])
        #expect(found.status == 0 && found.stdout.contains("\na,milk"), "\(found.stdout) \(found.stderr)")
        let integrity = try Spawned(executable: "/usr/bin/sqlite3", [path, "PRAGMA integrity_check"])
        #expect(try integrity.wait() == 0)
    }

    @Test func watchFollowsASearch() throws {
        let dir = try TemporaryDirectory()
        let schema = try dir.schemaFile(searchSchema)
        let path = dir.path("a.db")
        #expect(try tandem(["init", path, "--schema", schema]).status == 0)
        let watch = try Spawned(["watch", path, "--search", "searched_notes", "milk", "--mode", "ndjson"])
        defer { watch.signal(SIGTERM); _ = try? watch.wait() }
        _ = try watch.waitForLine("the first, empty result") { $0 == "[]" }
        #expect(try tandem(["exec", path, "INSERT INTO searched_notes(id, title) VALUES ('m', 'oat milk')"]).status == 0)
        let line = try watch.waitForLine("the row another process wrote") { $0.contains("oat milk") }.text
        #expect(line.contains(#""id":"m""#) && !line.contains("search_rank"), "\(line)")
    }
}
