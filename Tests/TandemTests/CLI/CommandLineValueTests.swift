import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

@Suite struct CommandLineValueTests {
    /// ARGs bind as numbers only when the text reads back identically; --args-json gives types.
    @Test func argumentsThatLookLikeNumbersStayText() throws {
        #expect(bindValue("007") == .text("007"))
        #expect(bindValue("+5") == .text("+5"))
        #expect(bindValue("-0") == .text("-0"))
        #expect(bindValue("2.50") == .text("2.50"))
        #expect(bindValue("1e3") == .text("1e3"))
        #expect(bindValue("42") == .integer(42))
        #expect(bindValue("-9223372036854775808") == .integer(.min))
        #expect(bindValue("2.5") == .real(2.5))
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        for (id, word) in [("a", "007"), ("b", "+5"), ("c", "-0")] {
            #expect(try tandem(["exec", db.path, "INSERT INTO notes(id, title) VALUES (?, ?)", id, word]).status == 0)
        }
        #expect(
            try runTandem([
                "exec", db.path, "INSERT INTO notes(id, title, done, score) VALUES ('d', ?, ?, ?)",
                "--args-json", #"["2.0", 7, 2.0]"#,
            ]).status == 0)
        let rows = try db.fetchAll("SELECT title, typeof(done), score FROM notes ORDER BY id")
        #expect(rows.map { $0[0] } == [.text("007"), .text("+5"), .text("-0"), .text("2.0")])
        #expect(rows[3][1] == .text("integer") && exact(rows[3][2]) == exact(.real(2.0)))
        let bad = try tandem(["exec", db.path, "SELECT ?", "--args-json", #"[{"a":1}]"#])
        #expect(bad.status == 2 && bad.stderr.contains("element 0 is an object"), "\(bad.stderr)")
    }

    /// An ARG that is not valid UTF-8 is an error, not U+FFFD, and nothing is written.
    @Test func invalidUTF8ArgumentsAreRefused() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let shell = try Spawned(
            executable: "/bin/sh",
            [
                "-c", "exec \"$0\" exec \"$1\" \"INSERT INTO notes(title) VALUES (?)\" \"$(printf 'ab\\377')\"",
                tandemBinary, db.path,
            ])
        #expect(try shell.wait() == 2)
        #expect(shell.stderr.contains("not valid UTF-8"), "\(shell.stderr)")
        #expect(try count(db, "SELECT count(*) FROM notes") == 0)
    }
}
