import Foundation
import Synchronization
import Tandem

/// Set once the process closes its databases to exit (``exitClosingDatabases(_:)``).
private let closingToExit = Atomic<Bool>(false)

/// True once the process is closing its databases to exit: a live query failing then is no error.
var isClosingToExit: Bool { closingToExit.load(ordering: .relaxed) }

/// Waits for the exit another thread has begun (``exitClosingDatabases(_:)``): a command whose
/// database was closed under it by that exit fails, and must not exit first with its failure.
func waitForExitInProgress() -> Never {
    while true { pause() }
}

/// Closes every database this process opened, so that the last process to use a file leaves its
/// data in the main file (no `-wal` left behind), then exits with `status`.
func exitClosingDatabases(_ status: Int32) -> Never {
    closingToExit.store(true, ordering: .relaxed)
    SharedDatabase.closeAll()
    exit(status)
}

/// Opens an existing database for a command.
func openDatabase(
    _ path: String, readOnly: Bool = false, synchronous: Configuration.Synchronous = .normal,
    configure: (inout Configuration) -> Void = { _ in }
) throws -> SharedDatabase {
    var configuration = Configuration()
    configuration.readOnly = readOnly
    configuration.synchronous = synchronous
    BusyTimeoutOption.apply(to: &configuration)
    reportWaitsForMigrations(&configuration, path: path)
    configure(&configuration)
    if !FileManager.default.fileExists(atPath: path) {
        throw TandemError.cannotOpen(path: path, reason: "the file does not exist (create it with `tandem init \(path) --schema FILE`)")
    }
    return try SharedDatabase(path: path, configuration: configuration)
}

/// Says once on stderr when other processes' commits are noticed by polling only.
func warnIfPolling(_ db: SharedDatabase, command: String) {
    guard let notice = db.changePollingNotice else { return }
    Output.error("tandem \(command): \(notice)\n")
}

/// Ends a long-running command (exit 1, saying why) once its database file is deleted or
/// replaced: it would otherwise go on for ever with the old file, which no process writes any
/// more. Checked every `seconds` on a thread of its own.
func stopWhenFileIsReplaced(_ db: SharedDatabase, command: String, every seconds: Double = 0.25) {
    let thread = Thread {
        while true {
            Thread.sleep(forTimeInterval: seconds)
            if let reason = db.fileReplacement {
                Output.error("tandem \(command): error: \(reason) while \(command) read it; stopping (run tandem \(command) again for the new file)\n")
                exit(1)
            }
        }
    }
    thread.name = "tandem.file-check"
    thread.start()
}

/// Microseconds on CLOCK_MONOTONIC, comparable across processes on one host.
func monotonicMicroseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
}

/// A command that ran but could not do what was asked; its message is the error line (exit 1).
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Says on standard error when a wait for the write lock goes on past the busy timeout because
/// another process is migrating the file's schema.
func reportWaitsForMigrations(_ configuration: inout Configuration, path: String) {
    configuration.onWaitForMigration = { pid in
        Output.error("tandem: waiting for process \(pid), which is migrating the schema of '\(path)' (it holds the write lock until it ends)\n")
    }
}
