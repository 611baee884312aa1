import Foundation
import Synchronization

/// A command's standard streams when a program runs it inside itself
/// (``CommandLineTool/runCaptured(_:standardInput:)``): its input is given bytes, its output and
/// errors are kept in memory, and none of them is a terminal. A command run as a process has
/// none (``current`` is nil) and uses the process's file descriptors 0, 1 and 2.
final class CapturedStreams: Sendable {
    /// The streams of the running command, if it runs inside another program.
    @TaskLocal static var current: CapturedStreams?

    /// What the command reads as standard input.
    let input: Data
    private let written = Mutex<(output: [UInt8], errors: [UInt8])>(([], []))
    /// The command's `--busy-timeout` (``BusyTimeoutOption``), which a process keeps globally.
    let busyTimeout = Mutex<Duration?>(nil)

    init(input: Data) { self.input = input }

    func writeOutput(_ bytes: UnsafeRawBufferPointer) { written.withLock { $0.output += bytes } }
    func writeError(_ bytes: UnsafeRawBufferPointer) { written.withLock { $0.errors += bytes } }

    /// Everything written so far to standard output and standard error.
    var bytes: (output: [UInt8], errors: [UInt8]) { written.withLock { $0 } }
}

/// The standard streams as a command sees them, captured or the process's.
enum StandardStreams {
    /// True when `descriptor` (0, 1 or 2) is a terminal; never for captured streams.
    static func isTerminal(_ descriptor: Int32) -> Bool {
        CapturedStreams.current == nil && isatty(descriptor) != 0
    }

    /// Standard input, read to its end.
    static func readInput() -> Data {
        CapturedStreams.current?.input ?? FileHandle.standardInput.readDataToEndOfFile()
    }
}
