import Foundation
import Tandem
import TandemPostgres

/// The `tandem` command: dispatches to a command, prints errors to stderr, and sets the exit status
/// (0 success, 1 failure, 2 usage error).
public enum CommandLineTool {
    struct Command: Sendable {
        let name: String
        let summary: String
        let usage: String
        /// The flags and options it takes, declared here once: its `run` parses by them.
        var syntax = Arguments.Syntax()
        let hidden: Bool
        /// SIGINT and SIGTERM stop it cleanly (a command that runs until stopped closes its
        /// databases and exits 0); any other command dies of them at once.
        var stopsOnSignal = false
        let run: @Sendable ([String]) async throws -> Int32
    }

    /// The commands of `tandem`: the public ones, and the hidden ones its own commands run as
    /// processes (`demo`'s helpers, `stress`'s writers) or its benchmarks time.
    static let commands: [Command] = [
        InitCommand.command, MigrateCommand.command, SchemaCommand.command, CheckCommand.command, ExecCommand.command, RunCommand.command, BackupCommand.command,
        RestoreCommand.command,
        ImportCommand.command,
        ExportCommand.command, BackendCommand.command, QueryCommand.command, SearchCommand.command, WatchCommand.command,
        CrudCommand.command, StatusCommand.command, AppCommand.command, SyncCommand.command,
        StressCommand.command, ChangesCommand.command, DemoCommand.command, HelperCommand.command, StressWriterCommand.command,
        PredicateBenchCommand.command, VerifyCommand.command,
    ]

    /// The commands only Tandem's tests run as real processes, in `tandem-test-support`
    /// (Tools/test-support), not in `tandem`.
    static let testSupportCommands: [Command] = [
        HoldCommand.command, CounterCommand.command, OpenRoundsCommand.command, BulkRecordsCommand.command, SearchBenchCommand.command, ScarceDescriptorsCommand.command,
        SchemaWriterCommand.command, TypedLayoutCommand.command,
    ]

    /// The commands a program runs: `tandem`'s, or the test support's.
    static func commands(testSupport: Bool) -> [Command] { testSupport ? testSupportCommands : commands }

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

    /// Free file descriptors a command needs besides those the Swift runtime takes for itself:
    /// `tandem app` holds about 40. With fewer, libdispatch (under Swift concurrency) can find
    /// none left when it makes its event loop or a timer and stops the process with SIGILL.
    static let descriptorsNeeded = 64

    /// What needs no database and no concurrency (and so works whatever the descriptor limit):
    /// the overview, `--version`, a command's `--help`, refusals of the command line; then the
    /// check that enough file descriptors are free. Returns the exit status when that is all,
    /// or nil when the command is to run. `tandem`'s entry point calls it before anything
    /// starts Swift concurrency.
    public static func runImmediately(_ arguments: [String], testSupport: Bool = false) -> Int32? {
        let commands = commands(testSupport: testSupport)
        if let bad = arguments.first(where: { $0.unicodeScalars.contains("\u{FFFD}") }), !argumentsAreValidUTF8() {
            Output.error("tandem: an argument is not valid UTF-8 (\(bad.debugDescription)); Tandem stores text as UTF-8\n")
            return 2
        }
        guard let name = arguments.first else {
            Output.error(overview)
            return 2
        }
        if name == "--version" || name == "version" {
            Output.write("tandem \(TandemVersion.string) (SQLite \(TandemVersion.sqlite))\n")
            return 0
        }
        if ["--help", "-h", "help"].contains(name) {
            Output.write(overview)
            return 0
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            Output.error("tandem: unknown command '\(Output.escapingControlCharacters(name))'\n\n" + overview)
            return 2
        }
        let options = arguments.dropFirst().prefix { $0 != "--" }  // after `--` everything is an argument
        if options.contains("--help") || options.contains("-h") {
            Output.write(command.usage)
            return 0
        }
        // A command run inside another program shares that program's descriptors.
        let free = CapturedStreams.current == nil ? DescriptorLimit.available(upTo: descriptorsNeeded) : descriptorsNeeded
        if free < descriptorsNeeded {
            Output.error(
                "tandem \(name): error: only \(free) more file\(free == 1 ? "" : "s") can be opened (EMFILE: the limit on open files, ulimit -n, is \(DescriptorLimit.current.map(String.init) ?? "?")); Tandem needs \(descriptorsNeeded) free; raise it with ulimit -n\n"
            )
            return 1
        }
        return nil
    }

    /// Waits until the CLOCK_MONOTONIC microsecond in `TANDEM_START_AT_US`, if set and ahead (at
    /// most 10 s), so that many processes a test or benchmark starts act at one instant.
    public static func waitForStartInstant() {
        guard let text = ProcessInfo.processInfo.environment["TANDEM_START_AT_US"], let startAt = Int64(text) else { return }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let wait = startAt - (Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000)
        if wait > 0 { usleep(useconds_t(min(wait, 10_000_000))) }
    }

    /// Makes libdispatch create the descriptors of its timers (`timerfd`, one per clock) now,
    /// while descriptors are free: it creates each when a timer on that clock is first armed, and
    /// stops the process with SIGILL when none is left then (a command that ran out of
    /// descriptors would otherwise crash at its next timed wait instead of failing with EMFILE).
    static func prepareTimers() async {
        let fired = DispatchGroup()
        for _ in 0..<2 { fired.enter() }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) { fired.leave() }
        DispatchQueue.global().asyncAfter(wallDeadline: .now() + .milliseconds(1)) { fired.leave() }
        // The two clocks' sleeps side by side: each arms its timer at once.
        async let continuous: Void? = try? Task.sleep(for: .milliseconds(1), tolerance: .zero, clock: .continuous)
        async let suspending: Void? = try? Task.sleep(for: .milliseconds(1), tolerance: .zero, clock: .suspending)
        _ = await (continuous, suspending)
        _ = fired.wait(timeout: .now() + 1)
    }

    /// Overwrites the passwords of backend URLs in the process's command line as `ps` shows it
    /// (`arguments` were read already), and warns on stderr that one was given there.
    public static func hidePasswords(_ arguments: [String]) {
        guard BackendURLSource.passwordOnCommandLine(arguments) else { return }
        BackendURLSource.scrubPasswords(arguments)
        Output.error(
            "tandem \(Output.escapingControlCharacters(arguments[0])): warning: a password on the command line can be read by every user of this host (ps) while the command starts; give the URL with --\(BackendURLSource.fileOption) FILE or \(BackendURLSource.environmentVariable), or the password with PGPASSWORD or ~/.pgpass\n"
        )
    }

    /// Runs the command named by `arguments[0]` (one of the test support's with `testSupport`)
    /// and returns the exit status.
    public static func run(_ arguments: [String], testSupport: Bool = false) async -> Int32 {
        PostgresBackend.register()
        BackendRegistry.register(ExecConnector.kind)
        if let status = runImmediately(arguments, testSupport: testSupport) { return status }
        await prepareTimers()
        let name = arguments[0]
        let command = commands(testSupport: testSupport).first { $0.name == name }!
        let captured = CapturedStreams.current != nil
        if !command.stopsOnSignal && !captured { Signals.restoreTermination() }
        // The last process to close a file leaves its data in the main file (no -wal left behind);
        // a command run inside another program closes what it opened.
        let scope = DatabaseScope()
        defer { captured ? scope.closeAll() : SharedDatabase.closeAll() }
        do {
            let rest = try BusyTimeoutOption.extract(from: Array(arguments.dropFirst()))
            return try await DatabaseScope.$current.withValue(scope) { try await command.run(rest) }
        } catch let error as Arguments.UsageError {
            Output.error("tandem \(name): \(Output.escapingControlCharactersInMessage(error.message))\n\n\(command.usage)")
            return 2
        } catch {
            // A signal's exit closed the databases under the command: that exit's status stands.
            if isClosingToExit { waitForExitInProgress() }
            Output.error("tandem \(name): error: \(Output.escapingControlCharactersInMessage(CommandHints.say(error)))\n")
            return 1
        }
    }
}

extension CommandLineTool {
    /// Runs a command of `tandem` inside this program, as `tandem ARGS…` would run as a process
    /// with `standardInput` on its standard input and neither output a terminal: returns its exit
    /// status and what it wrote to standard output and standard error. Commands that run until
    /// stopped (`watch`, `app`, `changes`, `demo`) or start processes of their own (`run`,
    /// `stress`) need a process of their own. Process-wide settings stay untouched: signal
    /// handling, the descriptor check, and databases the program opened itself.
    static func runCaptured(_ arguments: [String], standardInput: Data = Data()) async -> (status: Int32, output: [UInt8], errors: [UInt8]) {
        // These end their process (on a signal, a replaced file, a failed live query) or hand
        // their standard streams to processes of their own: inside another program they would
        // end it, or write past the captured streams.
        if let name = arguments.first, let command = commands.first(where: { $0.name == name }), command.stopsOnSignal || ["run", "stress", "demo"].contains(name) {
            return (2, [], Array("tandem \(name): runs as a process of its own, not inside another program\n".utf8))
        }
        let streams = CapturedStreams(input: standardInput)
        let status = await CapturedStreams.$current.withValue(streams) { await run(arguments) }
        let written = streams.bytes
        return (status, written.output, written.errors)
    }
}

/// True when every word of the process's command line is valid UTF-8 (Swift replaces invalid
/// bytes with U+FFFD when it makes `CommandLine.arguments`).
func argumentsAreValidUTF8() -> Bool {
    (0..<Int(CommandLine.argc)).allSatisfy { index in
        guard let pointer = CommandLine.unsafeArgv[index] else { return true }
        return String(validatingCString: pointer) != nil
    }
}
