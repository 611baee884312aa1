import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// The command line never tells its user to call a Swift API (HouseRulesTests checks that every
/// remedy a library message names is said as a command).
@Suite struct CommandTermsTests {
    /// API spellings: a Swift call with labels, a type's member, the library's type names.
    static func speaksSwift(_ text: String) -> Bool {
        text.range(of: #"[A-Za-z]\((?:[a-zA-Z]+:)+\)|\(\)|Configuration\.|SharedDatabase|SyncSession|uploadQueue\.|checkLayout"#, options: .regularExpression) != nil
    }

    /// Every command that opens a file that is no Tandem database says so in command terms.
    @Test func aFileThatIsNoTandemDatabaseIsSaidInCommandTerms() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("plain.db")
        let sqlite = try Spawned(executable: "/usr/bin/sqlite3", [path, "CREATE TABLE t(a)"])
        #expect(try sqlite.wait() == 0)
        for command in [["status"], ["exec", "SELECT 1"], ["crud"], ["export", "t"], ["schema"], ["check"], ["sync", "--backend", "sqlite:" + dir.path("s.db")]] {
            let result = try runTandem([command[0], path] + command.dropFirst(), timeout: 20)
            #expect(result.status != 0, "\(command)")
            let text = result.stdout + result.stderr
            #expect(!Self.speaksSwift(text), "\(command): \(text)")
            #expect(text.contains("tandem init"), "\(command) names the command that makes it one: \(text)")
        }
    }
}
