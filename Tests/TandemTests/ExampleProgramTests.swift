import Foundation
import Testing

/// The README's record example, built as `tandem-example`, runs and prints what it promises.
@Suite struct ExampleProgramTests {
    @Test func theREADMEExampleRuns() throws {
        let dir = try TemporaryDirectory()
        let binary = URL(fileURLWithPath: tandemBinary).deletingLastPathComponent().appendingPathComponent("tandem-example").path
        let run = try Spawned(executable: binary, [dir.path("todo.db")])
        #expect(try run.wait() == 0, "\(run.stderr)")
        #expect(run.output == [
            "open now: []",
            #"after inserts: ["Answer mail", "Buy milk"]"#,
            #"after update: ["Answer mail"]"#,
            #"due soon: ["Answer mail"]"#,
            "queued for upload: 3 CRUD entries",
        ])
    }
}
