import Foundation
import Testing
@testable import Tandem

/// A fresh temporary directory per test, removed when the value is released.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("tandem-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

let notesSchema = Schema(tables: [
    Table(name: "notes", columns: [.text("title"), .integer("done"), .real("score")],
          indexes: [Index(name: "by_title", columns: ["title"])]),
])

/// The `tandem` binary built beside the test bundle.
let tandemBinary: String = {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
    while dir.path != "/" {
        let candidate = dir.appendingPathComponent("tandem").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        dir = dir.deletingLastPathComponent()
    }
    return "/nonexistent/tandem (run `swift build` first)"
}()

/// Microseconds on CLOCK_MONOTONIC (the clock `tandem` stamps its output with).
func nowMicroseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
}

/// A spawned process whose output lines are collected as they arrive (stamped on arrival).
final class Spawned: @unchecked Sendable {
    // Invariant: `lines`, `stderrText` and `exited` are guarded by `condition`.
    let process = Process()
    let command: String
    private let condition = NSCondition()
    private(set) var lines: [(text: String, at: Int64)] = []
    private var stderrText = ""
    private var closed = 0

    init(executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        command = ([URL(fileURLWithPath: executable).lastPathComponent] + arguments).joined(separator: " ")
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try Spawned.spawn(process)
        reader(out.fileHandleForReading.fileDescriptor) { [self] line, at in lines.append((line, at)) }
        reader(err.fileHandleForReading.fileDescriptor) { [self] line, _ in stderrText += line + "\n" }
    }

    /// Foundation's `Process.run()` crashes when called from several threads at once on Linux
    /// (swift-corelibs-foundation issues 4772, 4795, 4810), so spawns are serialized.
    private static let spawnLock = NSLock()

    private static func spawn(_ process: Process) throws {
        spawnLock.lock()
        defer { spawnLock.unlock() }
        try process.run()
    }

    convenience init(_ arguments: [String], environment: [String: String] = [:]) throws {
        try self.init(executable: tandemBinary, arguments, environment: environment)
    }

    private func reader(_ fd: Int32, _ append: @escaping @Sendable (String, Int64) -> Void) {
        let thread = Thread { [self] in
            var pending = Data()
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                let at = nowMicroseconds()
                pending.append(contentsOf: buffer[0..<n])
                condition.lock()
                while let newline = pending.firstIndex(of: 10) {
                    append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self), at)
                    pending.removeSubrange(pending.startIndex...newline)
                }
                condition.broadcast()
                condition.unlock()
            }
            condition.lock()
            if !pending.isEmpty { append(String(decoding: pending, as: UTF8.self), nowMicroseconds()) }
            closed += 1
            condition.broadcast()
            condition.unlock()
        }
        thread.start()
    }

    var output: [String] { condition.lock(); defer { condition.unlock() }; return lines.map(\.text) }
    var stderr: String { condition.lock(); defer { condition.unlock() }; return stderrText }

    /// Waits (bounded) for an output line satisfying `predicate`; returns it and its arrival time.
    @discardableResult
    func waitForLine(timeout: Double = 10, _ what: String, where predicate: (String) -> Bool) throws -> (text: String, at: Int64) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let line = lines.first(where: { predicate($0.text) }) { return line }
            if closed == 2 || !condition.wait(until: deadline) {
                if let line = lines.first(where: { predicate($0.text) }) { return line }
                throw TestFailure("`\(command)` printed no line with \(what) within \(timeout) s; stdout: \(lines.suffix(5).map(\.text)) stderr: \(stderrText)")
            }
        }
    }

    /// Waits for exit (bounded); returns the exit status, or 128+signal.
    @discardableResult
    func wait(timeout: Double = 60) throws -> Int32 {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while process.isRunning {
            if Date() > deadline {
                kill(process.processIdentifier, SIGKILL)
                throw TestFailure("`\(command)` did not exit within \(timeout) s; stderr: \(stderr)")
            }
            usleep(2000)
        }
        condition.lock()
        while closed < 2 { if !condition.wait(until: Date(timeIntervalSinceNow: 5)) { break } }
        condition.unlock()
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }

    func signal(_ number: Int32) { if process.isRunning { kill(process.processIdentifier, number) } }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `tandem ARGS…` to completion; returns (status, stdout, stderr).
@discardableResult
func runTandem(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 60) throws -> (status: Int32, stdout: String, stderr: String) {
    let spawned = try Spawned(arguments, environment: environment)
    let status = try spawned.wait(timeout: timeout)
    return (status, spawned.output.joined(separator: "\n"), spawned.stderr)
}

/// Polls `condition` every 5 ms until it holds or `timeout` seconds pass (for states with no event to wait on).
func waitUntil(timeout: Double = 10, _ what: String, _ condition: () throws -> Bool) throws {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while try !condition() {
        if Date() > deadline { throw TestFailure("timed out after \(timeout) s waiting for \(what)") }
        usleep(5000)
    }
}

/// The first column of the first row, as an integer.
func count(_ db: SharedDatabase, _ sql: String, _ arguments: [any DatabaseValueConvertible] = []) throws -> Int64 {
    try db.read { try $0.scalar(sql, arguments).int64Value ?? -1 }
}

/// Writes the stress schema database via the library.
func makeStressDatabase(_ path: String) throws -> SharedDatabase {
    try SharedDatabase(path: path, schema: Schema(tables: [Table(
        name: "stress", columns: [.integer("writer"), .integer("txn"), .integer("row"), .text("payload"), .integer("written_at")],
        indexes: [Index(name: "by_writer", columns: ["writer", "txn"])])]))
}
