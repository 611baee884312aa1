import Foundation
import Testing
@testable import Tandem

/// `tandem watch` and `tandem changes` on a database whose file is deleted, deleted and created
/// again, or replaced by another file: they say so and exit 1 instead of watching the old file
/// for ever.
@Suite struct FileReplacementTests {
    enum Replacement: String, CaseIterable { case deleted, recreated, copiedOver, renamedAway }

    @Test(arguments: Replacement.allCases)
    func longRunningCommandsStopWhenTheirFileIsReplaced(_ replacement: Replacement) throws {
        for command in ["watch", "changes", "app"] {
            let dir = try TemporaryDirectory()
            let path = dir.path("a.db")
            let schema = try dir.schemaFile()
            #expect(try tandem(["init", path, "--schema", schema]).status == 0)
            let process = try Spawned(
                command == "watch"
                    ? ["watch", path, "SELECT count(*) AS n FROM notes", "--mode", "ndjson"]
                    : command == "app" ? ["app", path, "--backend", "sqlite:" + dir.path("server.db"), "--json"] : ["changes", path])
            try process.waitForLine("the first output") { $0 == #"[{"n":0}]"# || $0 == "ready" || $0.contains("became_owner") }
            // A write is seen, and does not stop it.
            #expect(try tandem(["exec", path, "INSERT INTO notes(id, title) VALUES ('a', 'x')"]).status == 0)
            try process.waitForLine("the write") { $0 == #"[{"n":1}]"# || $0 == "notes" || $0 == "unknown" || $0.contains("uploaded") }
            #expect(process.isRunning)
            let files = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("a.db") }
            switch replacement {
            case .deleted:
                for file in files { try FileManager.default.removeItem(atPath: dir.path(file)) }
            case .recreated:
                for file in files { try FileManager.default.removeItem(atPath: dir.path(file)) }
                #expect(try tandem(["init", path, "--schema", schema]).status == 0)
            case .copiedOver:
                #expect(try tandem(["init", dir.path("other.db"), "--schema", schema]).status == 0)
                #expect(rename(dir.path("other.db"), path) == 0)
            case .renamedAway:
                #expect(rename(path, dir.path("moved.db")) == 0)
            }
            let status = try process.wait(timeout: 10)
            // Deleted and created again: seen between the two, or after.
            let reasons =
                switch replacement {
                case .deleted, .renamedAway: ["was deleted"]
                case .recreated: ["was deleted", "was replaced by another file"]
                case .copiedOver: ["was replaced by another file"]
                }
            #expect(status == 1, "\(command) after the file was \(replacement): \(status)")
            #expect(reasons.contains { process.stderr.contains("'\(path)' \($0) while \(command) read it; stopping") }, "\(command): \(process.stderr)")
        }
    }
}
