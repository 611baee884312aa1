import Foundation
import Testing

/// README's command table and `tandem COMMAND --help` agree: every command listed, each row's
/// example in the command's help.
@Suite struct CommandTableTests {
    @Test func everyCommandIsInTheREADMEWithItsExample() throws {
        let readme = packageRoot.appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let rows = text.split(separator: "\n").filter { $0.hasPrefix("| `tandem ") || $0.hasPrefix("| `curl") }
        let overview = try tandem(["--help"]).stdout
        let listed = overview.split(separator: "\n").filter { $0.hasPrefix("  ") }.compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(rows.count == listed.count, "README lists \(rows.count) commands, tandem \(listed.count)")
        for name in listed {
            let row = try #require(rows.first { $0.hasPrefix("| `tandem \(name) ") }, "README has no row for \(name)")
            let cells = row.split(separator: "`").map(String.init)
            let example = try #require(cells.dropLast().last).replacingOccurrences(of: "\\|", with: "|")
            let help = try runTandem([name, "--help"])
            #expect(help.stdout.hasPrefix("Usage: tandem \(name)"), "\(name)")
            #expect(help.stdout.contains("Example: \(example)"), "\(name): README's example `\(example)` is not in its help")
        }
    }
}
