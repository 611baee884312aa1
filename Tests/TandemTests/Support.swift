import Foundation
import Synchronization
import Testing
@testable import Tandem
@testable import TandemCLI

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
    TableSchema(name: "notes", columns: [.text("title"), .integer("done"), .real("score")],
          indexes: [IndexSchema(name: "by_title", columns: ["title"])]),
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
    // Invariant: `lines`, `stderrText`, `closed` and `exitStatus` are guarded by `condition`.
    let command: String
    let pid: pid_t
    private let child: Subprocess
    private let condition = NSCondition()
    private(set) var lines: [(text: String, at: Int64)] = []
    private var stderrText = ""
    private var closed = 0
    private var exitStatus: Int32?

    init(executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        command = ([URL(fileURLWithPath: executable).lastPathComponent] + arguments).joined(separator: " ")
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        child = try Subprocess.spawn(executable, arguments, environment: env)
        pid = child.pid
        LiveChildren.add(pid)
        readLines(from: child.stdoutFD, name: "test.stdout", onLine: { [self] line, at in
            condition.lock(); lines.append((line, at)); condition.broadcast(); condition.unlock()
        }, onEnd: { [self] in finishStream() })
        readLines(from: child.stderrFD, name: "test.stderr", onLine: { [self] line, _ in
            condition.lock(); stderrText += line + "\n"; condition.unlock()
        }, onEnd: { [self] in finishStream() })
    }

    convenience init(_ arguments: [String], environment: [String: String] = [:]) throws {
        try self.init(executable: tandemBinary, arguments, environment: environment)
    }

    private func finishStream() {
        condition.lock()
        closed += 1
        if closed == 2 {
            exitStatus = child.wait()
            LiveChildren.remove(pid)
        }
        condition.broadcast()
        condition.unlock()
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
        condition.lock()
        defer { condition.unlock() }
        while exitStatus == nil {
            if !condition.wait(until: deadline) {
                kill(pid, SIGKILL)
                throw TestFailure("`\(command)` did not exit within \(timeout) s; stderr: \(stderrText)")
            }
        }
        return exitStatus ?? -1
    }

    var isRunning: Bool { condition.lock(); defer { condition.unlock() }; return exitStatus == nil }

    func signal(_ number: Int32) { if isRunning { kill(pid, number) } }

    deinit { if exitStatus == nil { kill(pid, SIGKILL) } }
}

/// Children still running when the test process exits are killed, so that a failed test leaves
/// no `tandem app` or `tandem watch` behind.
enum LiveChildren {
    private static let pids = Mutex<Set<pid_t>>([])
    private static let registered: Bool = {
        atexit { LiveChildren.killAll() }
        return true
    }()

    static func add(_ pid: pid_t) {
        _ = registered
        pids.withLock { _ = $0.insert(pid) }
    }

    static func remove(_ pid: pid_t) { pids.withLock { _ = $0.remove(pid) } }

    static func killAll() {
        for pid in pids.withLock({ $0 }) { kill(pid, SIGKILL) }
    }
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
    try SharedDatabase(path: path, schema: Schema(tables: [TableSchema(
        name: "stress", columns: [.integer("writer"), .integer("txn"), .integer("row"), .text("payload"), .integer("written_at")],
        indexes: [IndexSchema(name: "by_writer", columns: ["writer", "txn"])])]))
}
