import Foundation
import Tandem

/// The `tandem` command: dispatches to a command, prints errors to stderr, and sets the exit status
/// (0 success, 1 failure, 2 usage error).
public enum CommandLineTool {
    struct Command: Sendable {
        let name: String
        let summary: String
        let usage: String
        let hidden: Bool
        let run: @Sendable ([String]) async throws -> Int32
    }

    static let commands: [Command] = [
        InitCommand.command, ExecCommand.command, QueryCommand.command, WatchCommand.command,
        CrudCommand.command, StatusCommand.command, AppCommand.command, SyncCommand.command,
        StressCommand.command, ChangesCommand.command, DemoCommand.command, HelperCommand.command, StressWriterCommand.command,
        HoldCommand.command, CounterCommand.command,
    ]

    static var overview: String {
        var text = """
            tandem: many processes, one SQLite database, live queries, one sync owner.

            Usage: tandem COMMAND [ARGS…] [--help]

            Commands:

            """
        for command in commands where !command.hidden {
            text += "  " + command.name.padding(toLength: 8, withPad: " ", startingAt: 0) + command.summary + "\n"
        }
        text += "\nRun `tandem COMMAND --help` for a command's options.\n"
        return text
    }

    /// Runs the command named by `arguments[0]` and returns the exit status.
    public static func run(_ arguments: [String]) async -> Int32 {
        guard let name = arguments.first else {
            Output.error(overview)
            return 2
        }
        if ["--help", "-h", "help"].contains(name) {
            Output.write(overview)
            return 0
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            Output.error("tandem: unknown command '\(name)'\n\n" + overview)
            return 2
        }
        let rest = Array(arguments.dropFirst())
        let options = rest.prefix { $0 != "--" }  // after `--` everything is an argument
        if options.contains("--help") || options.contains("-h") {
            Output.write(command.usage)
            return 0
        }
        do {
            return try await command.run(rest)
        } catch let error as Arguments.UsageError {
            Output.error("tandem \(name): \(error.message)\n\n\(command.usage)")
            return 2
        } catch {
            Output.error("tandem \(name): error: \(error)\n")
            return 1
        }
    }
}

/// Signal handling for long-running commands: SIGINT/SIGTERM call `handler` once.
enum Signals {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    static func onTerminate(_ handler: @escaping @Sendable () -> Void) {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            sources.append(source)
        }
    }
}

/// Parses `?` arguments from the command line: decimal integers bind as integers, decimal reals
/// as reals, everything else as text.
func bindValue(_ text: String) -> DatabaseValue {
    if let i = Int64(text) { return .integer(i) }
    if text.contains("."), let d = Double(text), d.isFinite, !text.hasPrefix("."), !text.hasSuffix(".") { return .real(d) }
    return .text(text)
}

/// Opens an existing database for a command.
func openDatabase(_ path: String, readOnly: Bool = false) throws -> SharedDatabase {
    var configuration = Configuration()
    configuration.readOnly = readOnly
    if !FileManager.default.fileExists(atPath: path) {
        throw TandemError.cannotOpen(path: path, reason: "the file does not exist (create it with `tandem init \(path) --schema FILE`)")
    }
    return try SharedDatabase(path: path, configuration: configuration)
}

/// Microseconds on CLOCK_MONOTONIC, comparable across processes on one host.
func monotonicMicroseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
}
