import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// Each output mode's exact text on a fixed table with NULL, quotes, commas, newlines and Unicode.
@Suite struct OutputModeTests {
    let dir: TemporaryDirectory
    let db: SharedDatabase

    init() throws {
        dir = try TemporaryDirectory()
        db = try SharedDatabase(
            path: dir.path("o.db"),
            schema: Schema(tables: [
                TableSchema(name: "t", columns: [.text("name"), .integer("n")])
            ]))
        try db.execute("INSERT INTO t(id, name, n) VALUES ('1', 'plain', 1), ('2', 'a, \"b\"' || char(10) || 'c', NULL), ('3', NULL, 3), ('4', 'ü|✓', -4)")
    }

    func query(_ mode: [String], _ sql: String = "SELECT name, n FROM t ORDER BY id") throws -> String {
        let result = try tandem(["query", db.path, sql] + mode)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    @Test func csvFollowsRFC4180() throws {
        let child = try Subprocess.spawn(tandemBinary, ["query", db.path, "SELECT name, n FROM t ORDER BY id", "--mode", "csv"])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true { let n = read(child.stdoutFD, &buffer, buffer.count); if n <= 0 { break }; bytes += buffer.prefix(n) }
        #expect(child.wait() == 0)
        #expect(String(decoding: bytes, as: UTF8.self) == "name,n\r\nplain,1\r\n\"a, \"\"b\"\"\nc\",NULL\r\nNULL,3\r\nü|✓,-4\r\n")
    }

    @Test func everyModeHasItsExactForm() throws {
        #expect(try query(["--mode", "json"]) == #"[{"name":"plain","n":1},{"name":"a, \"b\"\nc","n":null},{"name":null,"n":3},{"name":"ü|✓","n":-4}]"#)
        #expect(
            try query(["--mode", "ndjson"]) == #"{"name":"plain","n":1}"# + "\n" + #"{"name":"a, \"b\"\nc","n":null}"# + "\n" + #"{"name":null,"n":3}"# + "\n"
                + #"{"name":"ü|✓","n":-4}"#)
        #expect(try query(["--mode", "tsv", "--null", ""]) == "name\tn\nplain\t1\na, \"b\"\\nc\t\n\t3\nü|✓\t-4")
        #expect(try query(["--mode", "markdown"]) == "| name | n |\n| --- | --- |\n| plain | 1 |\n| a, \"b\"\\nc | NULL |\n| NULL | 3 |\n| ü\\|✓ | -4 |")
        #expect(try query(["--mode", "line"], "SELECT name, n AS number FROM t WHERE id = '1'") == "  name = plain\nnumber = 1")
        #expect(try query(["--mode", "table", "--no-header", "--null", "-"]) == "plain      1\na, \"b\"\\nc  -\n-          3\nü|✓        -4\n(4 rows)")
    }

    @Test func emptyResultsStillNameTheirColumns() throws {
        let empty = "SELECT name, n FROM t WHERE 0"
        #expect(try query([], empty) == "name  n\n----  -\n(0 rows)")
        #expect(try query(["--mode", "csv"], empty) == "name,n\r")  // CRLF; the helper splits lines at LF
        #expect(try query(["--mode", "json"], empty) == "[]")
    }

    @Test func sqlComesFromStandardInputAFileOrACommentedArgument() throws {
        let file = dir.path("q.sql")
        try "-- the open ones\nSELECT count(*) AS c FROM t WHERE n > ?".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try tandem(["query", db.path, "--file", file, "0", "--json"]).stdout == #"[{"c":2}]"#)
        #expect(try tandem(["query", db.path, "-- a comment\nSELECT 1 AS one", "--json"]).stdout == #"[{"one":1}]"#)
        let piped = try Spawned(executable: "/bin/sh", ["-c", "echo 'SELECT 2 AS two' | \"$0\" query \"$1\" --json", tandemBinary, db.path])
        #expect(try piped.wait() == 0)
        #expect(piped.output == [#"[{"two":2}]"#])
        let dash = try Spawned(executable: "/bin/sh", ["-c", "echo 'SELECT ? AS v' | \"$0\" query \"$1\" - 7 --json", tandemBinary, db.path])
        #expect(try dash.wait() == 0)
        #expect(dash.output == [#"[{"v":7}]"#])
    }

    @Test func execPrintsReturningRowsOrTheRowsChanged() throws {
        let returning = try tandem(["exec", db.path, "INSERT INTO t(id, name) VALUES ('5', 'new') RETURNING id, name", "--json"])
        #expect(returning.stdout == #"[{"id":"5","name":"new"}]"#, "\(returning.stderr)")
        #expect(try tandem(["exec", db.path, "UPDATE t SET n = 0 WHERE n IS NOT NULL"]).stdout == "3 rows changed")
        #expect(try tandem(["exec", db.path, "DELETE FROM t WHERE id = '5'"]).stdout == "1 row changed")
        #expect(try tandem(["exec", db.path, "DELETE FROM t WHERE id = 'x'", "--quiet"]).stdout == "")
    }

    @Test func watchPrintsTheSameModes() throws {
        let watcher = try Spawned(["watch", db.path, "SELECT count(*) AS n FROM t WHERE n > ?", "0", "--mode", "ndjson"])
        try watcher.waitForLine("the first result") { $0 == #"[{"n":2}]"# }
        try db.execute("INSERT INTO t(id, name, n) VALUES ('9', 'nine', 9)")
        try watcher.waitForLine("the next result, one line") { $0 == #"[{"n":3}]"# }
        watcher.signal(SIGTERM)
        #expect(try watcher.wait() == 0)
        let csv = try Spawned(["watch", db.path, "SELECT name FROM t WHERE id = '1'", "--mode", "csv", "--no-header"])
        try csv.waitForLine("a CSV result") { $0 == "plain\r" }
        csv.signal(SIGTERM)
        #expect(try csv.wait() == 0)
    }

    @Test func schemaAndVersion() throws {
        let schema = try tandem(["schema", db.path])
        #expect(try Schema(json: Data(schema.stdout.utf8)) == db.schema)
        let swift = try tandem(["schema", db.path, "--swift"]).stdout
        #expect(swift.contains("struct T: Record, Equatable {") && swift.contains("var name: String?") && swift.contains("var n: Int64?"))
        let version = try tandem(["--version"])
        #expect(version.status == 0 && version.stdout == "tandem \(TandemVersion.string) (SQLite \(TandemVersion.sqlite))")
    }
}
