import Foundation

/// A `tandem` child process whose stdout lines are handed to a callback, each stamped with the
/// CLOCK_MONOTONIC microsecond at which it was read.
final class ChildProcess: @unchecked Sendable {
    // Invariant: `process` is configured before `start()` and only signalled/waited afterwards.
    let process = Process()
    let label: String
    private let output = Pipe()

    /// The path of the running `tandem` binary.
    static var executable: URL {
        URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
    }

    init(label: String, arguments: [String], quietStderr: Bool = false) {
        self.label = label
        process.executableURL = ChildProcess.executable
        process.arguments = arguments
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        if quietStderr { process.standardError = FileHandle.nullDevice }
    }

    /// Starts the process and a reader thread calling `onLine(line, readAtMicroseconds)`.
    func start(onLine: @escaping @Sendable (String, Int64) -> Void) throws {
        try ChildProcess.spawn(process)
        let handle = output.fileHandleForReading
        let thread = Thread {
            var pending = Data()
            let fd = handle.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                let now = monotonicMicroseconds()
                pending.append(contentsOf: buffer[0..<n])
                while let newline = pending.firstIndex(of: 10) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    onLine(line, now)
                }
            }
        }
        thread.name = "tandem.child-\(label)"
        thread.start()
    }

    /// Foundation's `Process.run()` is not safe to call from several threads at once on Linux
    /// (swift-corelibs-foundation issues 4772, 4795, 4810), so spawns are serialized.
    static func spawn(_ process: Process) throws {
        spawnLock.lock()
        defer { spawnLock.unlock() }
        try process.run()
    }

    private static let spawnLock = NSLock()

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    func terminate() { if process.isRunning { kill(process.processIdentifier, SIGTERM) } }
    func kill9() { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

    /// Waits for exit; returns the exit status (or 128 + signal).
    @discardableResult
    func wait() -> Int32 {
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }
}

/// Percentiles of a sample (nearest rank), in the sample's unit.
struct Percentiles {
    private let sorted: [Double]
    init(_ values: [Double]) { sorted = values.sorted() }
    var count: Int { sorted.count }
    func value(_ p: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }
    var largest: Double? { sorted.last }
}

func milliseconds(_ microseconds: Double?) -> String {
    guard let microseconds else { return "n/a" }
    return String(format: "%.2f ms", microseconds / 1000)
}
