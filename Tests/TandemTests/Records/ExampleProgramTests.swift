import Foundation
import Testing

/// The README's record example, built as `tandem-example`, runs and prints what it promises.
@Suite struct ExampleProgramTests {
    @Test func theREADMEExampleRuns() throws {
        let dir = try TemporaryDirectory()
        let binary = URL(fileURLWithPath: tandemBinary).deletingLastPathComponent().appendingPathComponent("tandem-example").path
        let run = try Spawned(executable: binary, [dir.path("todo.db")])
        #expect(try run.wait() == 0, "\(run.stderr)")
        #expect(
            run.output == [
                "open now: []",
                #"after inserts: ["Answer mail", "Buy milk"]"#,
                #"after update: ["Answer mail"]"#,
                #"due soon: ["Answer mail"]"#,
                "queued for upload: 3 CRUD entries",
            ])
    }

    /// README shows the example program as it is, so what a reader pastes compiles and runs.
    @Test func theREADMEShowsTheExampleProgramWhole() throws {
        let root = packageRoot
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let program = try String(contentsOf: root.appendingPathComponent("Tools/example/main.swift"), encoding: .utf8)
        let section = try #require(readme.range(of: "## Example: records"))
        let block = try #require(readme[section.upperBound...].range(of: "```swift\n"))
        let end = try #require(readme[block.upperBound...].range(of: "```\n"))
        #expect(String(readme[block.upperBound..<end.lowerBound]) == program)
    }
}
