import Foundation
import Synchronization
import Tandem

/// A `tandem` child process whose stdout lines are handed to a callback, each stamped with the
/// CLOCK_MONOTONIC microsecond at which it was read.
final class ChildProcess: Sendable {
    let label: String
    private let arguments: [String]
    private let quietStderr: Bool
    /// Variables added to this process's environment for the child.
    private let environment: [String: String]
    private let state = Mutex<(process: Subprocess?, exitStatus: Int32?)>((nil, nil))
    private let exited = DispatchSemaphore(value: 0)

    /// The path of the running `tandem` binary.
    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    init(label: String, arguments: [String], environment: [String: String] = [:], quietStderr: Bool = false) {
        self.label = label
        self.arguments = arguments
        self.environment = environment
        self.quietStderr = quietStderr
    }

    /// Starts the process and a reader thread calling `onLine(line, readAtMicroseconds)`.
    func start(onLine: @escaping @Sendable (String, Int64) -> Void) throws {
        let process = try Subprocess.spawn(
            ChildProcess.executable, arguments, environment: environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 },
            stderr: quietStderr ? .discard : .inherit)
        state.withLock { $0.process = process }
        readLines(from: process.stdoutFD, name: "tandem.child-\(label)", onLine: onLine) { [self] in
            let status = process.wait()
            state.withLock { $0.exitStatus = status }
            exited.signal()
        }
    }

    var pid: Int32 { state.withLock { $0.process?.pid ?? -1 } }
    var isRunning: Bool { state.withLock { $0.process != nil && $0.exitStatus == nil } }

    func terminate() { signal(SIGTERM) }
    func kill9() { signal(SIGKILL) }
    /// Pauses the process (SIGSTOP) or lets it go on (SIGCONT).
    func pause() { signal(SIGSTOP) }
    func resume() { signal(SIGCONT) }

    private func signal(_ number: Int32) {
        state.withLock { s in
            if let process = s.process, s.exitStatus == nil { process.signal(number) }
        }
    }

    /// Waits for exit; returns the exit status (or 128 + signal).
    @discardableResult
    func wait() -> Int32 {
        exited.wait()
        exited.signal()
        return state.withLock { $0.exitStatus ?? -1 }
    }
}
