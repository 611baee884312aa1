import Foundation
import Tandem

enum RunCommand {
    static let command = CommandLineTool.Command(
        name: "run", summary: "run a non-Tandem writer while holding Tandem's write lock",
        usage: """
            Usage: tandem run DB -- CMD [ARG…]

            Takes Tandem's write lock for DB (waiting for other writers, up to the busy timeout),
            runs CMD with its arguments (standard input, output and error are CMD's), then releases
            the lock and wakes every live query of every process. So a writer that does not use
            Tandem, such as the sqlite3 shell, queues with Tandem writers instead of failing with
            "database is locked". Exits with CMD's exit status.

            Example: tandem run app.db -- sqlite3 app.db ".read migrate.sql"

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words)
        try args.require(["DB", "CMD"], more: true)
        let db = try openDatabase(args.positionals[0])
        let command = Array(args.positionals.dropFirst())
        let executable = try resolve(command[0])
        return try db.withWriteLock {
            let child = try Subprocess.spawn(executable, Array(command.dropFirst()), stdout: .inherit, stderr: .inherit, inheritsStdin: true)
            return child.wait()
        }
    }

    /// A command name found on PATH (or a path as given).
    private static func resolve(_ name: String) throws -> String {
        if name.contains("/") { return name }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw Arguments.UsageError(message: "command not found: \(name)")
    }
}
