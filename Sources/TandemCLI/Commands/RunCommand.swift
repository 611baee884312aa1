import Foundation
import Tandem

enum RunCommand {
    static let command = CommandLineTool.Command(
        name: "run", summary: "run a non-Tandem writer while holding Tandem's write lock",
        usage: """
            Usage: tandem run DB -- CMD [ARG…]

            Takes Tandem's write lock for DB (waiting for other writers, up to the busy timeout),
            runs CMD with its arguments (standard input, output and error are CMD's), then releases
            the lock and, if CMD committed anything, wakes every live query of every process. So a
            writer that does not use Tandem, such as the sqlite3 shell, queues with Tandem writers
            instead of failing with "database is locked". Exits with CMD's exit status (128 plus
            the signal that ended it). SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to tandem go to
            CMD (one from the terminal reached CMD already), and the lock is held until CMD exits,
            by CMD itself too (it inherits a descriptor of the lock), so that the lock outlives
            tandem if tandem is killed first (kill -9).
            A CMD that cannot start (not found, not executable) is refused before DB is opened,
            saying why; nothing is changed.

            Example: tandem run app.db -- sqlite3 app.db ".read migrate.sql"

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB", "CMD"], more: true)
        let command = Array(args.positionals.dropFirst())
        // Before the database is opened: a command that cannot start changes no file.
        let executable = try resolve(command[0])
        let db = try openDatabase(args.positionals[0])
        defer { SignalForwarding.end() }
        // CMD inherits a descriptor of the lock: it holds the lock as long as it runs, even if
        // this process is killed first (its writes never run unlocked, orphaned).
        return try db.withInheritableWriteLock { _ in
            SignalForwarding.begin()
            let child: Subprocess
            do {
                child = try Subprocess.spawn(executable, Array(command.dropFirst()), stdout: .inherit, stderr: .inherit, inheritsStdin: true)
            } catch let error as SystemError {
                throw CannotRun(command: command[0], reason: String(cString: strerror(error.errno)))
            }
            SignalForwarding.forward(to: child.pid)
            var info = siginfo_t()
            while waitid(P_PID, id_t(child.pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
            SignalForwarding.stopForwarding()
            return child.wait()
        }
    }

    /// A command that cannot start; nothing was changed.
    struct CannotRun: Error, CustomStringConvertible {
        let command: String
        let reason: String
        var description: String { "cannot run '\(command)': \(reason); nothing was changed" }
    }

    /// A command name found on PATH, or a path as given, that names an executable file.
    private static func resolve(_ name: String) throws -> String {
        if name.contains("/") {
            var info = stat()
            guard stat(name, &info) == 0 else { throw CannotRun(command: name, reason: String(cString: strerror(errno))) }
            guard info.st_mode & S_IFMT != S_IFDIR else { throw CannotRun(command: name, reason: "it is a directory") }
            guard access(name, X_OK) == 0 else { throw CannotRun(command: name, reason: String(cString: strerror(errno))) }
            return name
        }
        guard let found = ExecutableSearch.onPath(name) else { throw CannotRun(command: name, reason: "no executable file of that name in PATH") }
        return found
    }
}
