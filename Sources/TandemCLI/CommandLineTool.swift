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
        InitCommand.command, CheckCommand.command, ExecCommand.command, QueryCommand.command, WatchCommand.command,
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
        if let bad = arguments.first(where: { $0.unicodeScalars.contains("\u{FFFD}") }), !argumentsAreValidUTF8() {
            Output.error("tandem: an argument is not valid UTF-8 (\(bad.debugDescription)); Tandem stores text as UTF-8\n")
            return 2
        }
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
        if !["watch", "app", "changes", "demo"].contains(name) { Signals.restoreTermination() }
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

/// Signal handling for long-running commands (`watch`, `app`, `changes`, `demo`), which stop
/// cleanly with exit 0 on SIGINT or SIGTERM at any moment, even before they are ready.
///
/// `tandem`'s first statement installs a handler (``catchTermination()``) that records the signal
/// and writes a byte to a pipe (async-signal-safe). A long-running command reads that pipe on a
/// thread of its own (``onTerminate(_:)``), so a signal that came early is acted on as soon as
/// the command can stop. Every other command restores the default action
/// (``restoreTermination()``) and, if a signal already came, takes it as usual.
public enum Signals {
    nonisolated(unsafe) private static var readEnd: Int32 = -1
    nonisolated(unsafe) private static var writeEnd: Int32 = -1
    nonisolated(unsafe) private static var received: Int32 = 0

    /// Catches SIGINT and SIGTERM for the whole process from now on.
    public static func catchTermination() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        readEnd = fds[0]
        writeEnd = fds[1]
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(writeEnd, F_SETFL, O_NONBLOCK)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { number in
            Signals.received = number
            var byte: UInt8 = 1
            _ = write(Signals.writeEnd, &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
    }

    /// Restores the default action of SIGINT and SIGTERM, and takes one that already came.
    static func restoreTermination() {
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
        if received != 0 { raise(received) }
    }

    /// Runs `handler` once, on a thread of its own, when SIGINT or SIGTERM arrives (or has
    /// arrived since ``catchTermination()``).
    static func onTerminate(_ handler: @escaping @Sendable () -> Void) {
        let fd = readEnd
        let thread = Thread {
            var byte: UInt8 = 0
            while fd >= 0 && read(fd, &byte, 1) < 0 && errno == EINTR {}
            handler()
        }
        thread.name = "tandem.signals"
        thread.start()
    }
}

/// Parses `?` arguments from the command line. A word binds as an integer or a real only when
/// it reads back as exactly the same text (`42`, `-7`, `2.5`), so `007`, `+5`, `-0`, `1e3` and
/// `2.50` stay text; `--args-json` gives exact types instead.
func bindValue(_ text: String) -> DatabaseValue {
    if let i = Int64(text), String(i) == text, text != "-0" { return .integer(i) }
    if let d = Double(text), d.isFinite, d.description == text, text.contains("."), !text.contains("e") { return .real(d) }
    return .text(text)
}

/// The `?` arguments of `exec`, `query` and `watch`: the ARG words, or the JSON array given with
/// `--args-json` (`'["007", 2.0, 3, null]'`: strings bind as text, integers as integers, numbers
/// with a fraction or exponent as reals, null as NULL, true/false as 1/0).
func sqlArguments(_ args: Arguments, after count: Int) throws -> [DatabaseValue] {
    let words = Array(args.positionals.dropFirst(count))
    guard let json = args.options["args-json"] else { return words.map(bindValue) }
    guard words.isEmpty else {
        throw Arguments.UsageError(message: "give the SQL arguments either as ARGs or with --args-json, not both")
    }
    guard case .array(let values) = try JSONValue(parsing: json) else {
        throw Arguments.UsageError(message: "--args-json takes a JSON array, such as '[\"007\", 2.0, null]'")
    }
    return try values.enumerated().map { index, value in
        switch value {
        case .object, .array:
            throw Arguments.UsageError(message: "--args-json: element \(index) is an \(value.isObject ? "object" : "array"); give a string, number, true, false or null")
        default: return value.databaseValue
        }
    }
}

private extension JSONValue {
    var isObject: Bool { if case .object = self { return true } else { return false } }
}

/// True when every word of the process's command line is valid UTF-8 (Swift replaces invalid
/// bytes with U+FFFD when it makes `CommandLine.arguments`).
func argumentsAreValidUTF8() -> Bool {
    (0..<Int(CommandLine.argc)).allSatisfy { index in
        guard let pointer = CommandLine.unsafeArgv[index] else { return true }
        return String(validatingCString: pointer) != nil
    }
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

/// Says once on stderr when other processes' commits are noticed by polling only.
func warnIfPolling(_ db: SharedDatabase, command: String) {
    guard let reason = db.changeWakeupUnavailableReason else { return }
    Output.error("tandem \(command): inotify is unavailable (\(reason)); other processes' commits are noticed every \(db.configuration.changePollInterval) s\n")
}

/// Microseconds on CLOCK_MONOTONIC, comparable across processes on one host.
func monotonicMicroseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
}
