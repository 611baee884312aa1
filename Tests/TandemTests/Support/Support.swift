import Foundation
import Synchronization
import Testing
@testable import Tandem
@testable import TandemCLI
@testable import TandemPostgres

/// A fresh temporary directory per test, removed when the value is released.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("tandem-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes `schema` as the JSON schema file the CLI takes (`--schema`) and returns its path.
    func schemaFile(_ schema: Schema = notesSchema, name: String = "schema.json") throws -> String {
        let file = path(name)
        try schema.jsonData().write(to: URL(fileURLWithPath: file))
        return file
    }
}

/// The package's root folder (this file is `Tests/TandemTests/Support/Support.swift`).
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

let notesSchema = Schema(tables: [
    TableSchema(
        name: "notes", columns: [.text("title"), .integer("done"), .real("score")],
        indexes: [IndexSchema(name: "by_title", columns: ["title"])])
])

/// `notes` plus a local-only `drafts` and an insert-only `events` table, for upload queue tests.
let queueSchema = Schema(
    tables: notesSchema.tables + [
        TableSchema(name: "drafts", columns: [.text("body")], localOnly: true),
        TableSchema(name: "events", columns: [.text("kind")], insertOnly: true),
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

/// The `tandem-test-support` binary built beside `tandem`: the commands only tests run.
let testSupportBinary = URL(fileURLWithPath: tandemBinary).deletingLastPathComponent().appendingPathComponent("tandem-test-support").path

/// Writes `bytes` to a new file at `path` with `mode`, through a descriptor marked close-on-exec:
/// a child another thread spawns meanwhile does not inherit it, so executing the file later
/// cannot fail with ETXTBSY (Text file busy) while that child lives.
func writeFile(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    guard fd >= 0 else { throw SystemError(call: "open(2)", path: path, errno: errno) }
    defer { close(fd) }
    guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count, fchmod(fd, mode) == 0 else {
        throw SystemError(call: "write(2)", path: path, errno: errno)
    }
}

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
        readLines(
            from: child.stdoutFD, name: "test.stdout",
            onLine: { [self] line, at in
                condition.lock(); lines.append((line, at)); condition.broadcast(); condition.unlock()
            }, onEnd: { [self] in finishStream() })
        readLines(
            from: child.stderrFD, name: "test.stderr",
            onLine: { [self] line, _ in
                condition.lock(); stderrText += line + "\n"; condition.unlock()
            }, onEnd: { [self] in finishStream() })
    }

    convenience init(_ arguments: [String], environment: [String: String] = [:]) throws {
        try self.init(executable: tandemBinary, arguments, environment: environment)
    }

    /// A command of `tandem-test-support` (`hold`, `counter`, …) as a real process.
    convenience init(testSupport arguments: [String], environment: [String: String] = [:]) throws {
        try self.init(executable: testSupportBinary, arguments, environment: environment)
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

/// Polls `condition` every 5 ms until it holds or `timeout` seconds pass: a bounded wait for a
/// state with no event to wait on (a row in another process's file, say), failing with `what`.
func waitUntil(timeout: Double = 10, _ what: String, _ condition: () throws -> Bool) throws {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while try !condition() {
        if Date() > deadline { throw TestFailure("timed out after \(timeout) s waiting for \(what)") }
        usleep(5000)
    }
}

/// ``waitUntil(timeout:_:_:)`` on the main actor: checks `condition` every 5 ms, giving the main
/// actor to what is delivered there in between, until it holds or `timeout` seconds pass.
@MainActor
func waitOnMainActor(timeout: Double = 10, _ what: String, _ condition: () throws -> Bool) async throws {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while try !condition() {
        if Date() > deadline { throw TestFailure("timed out after \(timeout) s waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// The first column of the first row, as an integer.
func count(_ db: SharedDatabase, _ sql: String, _ arguments: [any DatabaseValueConvertible] = []) throws -> Int64 {
    try db.read { try $0.scalar(sql, arguments).int64Value ?? -1 }
}

/// Writes the stress schema database via the library.
func makeStressDatabase(_ path: String) throws -> SharedDatabase {
    try SharedDatabase(
        path: path,
        schema: Schema(tables: [
            TableSchema(
                name: "stress", columns: [.integer("writer"), .integer("txn"), .integer("row"), .text("payload"), .integer("written_at")],
                indexes: [IndexSchema(name: "by_writer", columns: ["writer", "txn"])])
        ]))
}

/// Seconds a block takes (for messages only; tests assert on bounded waits).
enum FidelityClock {
    static func measure(_ body: () throws -> Void) throws -> Double {
        let start = nowMicroseconds()
        try body()
        return Double(nowMicroseconds() - start) / 1e6
    }
}

/// A value's exact identity: storage class plus bits (so -0.0 differs from 0.0, 2.0 from 2).
func exact(_ value: DatabaseValue) -> String {
    switch value {
    case .null: return "null"
    case .integer(let i): return "integer \(i)"
    case .real(let d): return "real \(String(d.bitPattern, radix: 16)) (\(d))"
    case .text(let s): return "text \(Array(s.utf8).map { String($0, radix: 16) }.joined(separator: " ")) (\(s.debugDescription))"
    case .blob(let d): return "blob \(d.base64EncodedString())"
    }
}

/// Adversarial values (int64 limits, reals of every kind, text that looks like something else, NULL).
let adversarialValues: [JSONValue] = [
    .integer(.max), .integer(.min), .integer(0), .integer(-1),
    .double(2.0), .double(1000.0), .double(-0.0), .double(0.1), .double(0.30000000000000004),
    .double(.leastNonzeroMagnitude), .double(2.2250738585072014e-308), .double(.greatestFiniteMagnitude), .double(-.greatestFiniteMagnitude),
    .double(-1.1545580616824966e+232), .double(1.4523142177899403e+308), .double(123456789.12345678), .double(1e16),
    .string(""), .string("007"), .string("a\u{0}b"), .string("\u{1}\t\n\r\u{1b}\u{7f}"), .string("{\"x\":1}"), .string("[1,2]"),
    .string("null"), .string("true"), .string("2.0"), .string("😀 Ünïcödé ☃ \u{301}e"), .string("'single' \"double\" \\ back"),
    .null,
]

// MARK: - Helpers
/// Runs `sqlite3 path sql` and returns its output lines.
@discardableResult
func sqlite(_ path: String, _ sql: String) throws -> [String] {
    let shell = try Spawned(executable: "/usr/bin/sqlite3", [path, sql])
    let status = try shell.wait()
    guard status == 0 else { throw TestFailure("sqlite3 \(path) \(sql): \(shell.stderr)") }
    return shell.output
}

/// Writes a file of `bytes` zero bytes in place (no temporary copy).
/// Writes `bytes` zeros to `path`, or as many as fit: on a file system filling up, a short write
/// (or ENOSPC) is the point, not a failure.
func fill(_ path: String, bytes: Int) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw SystemError(call: "open(2)", path: path, errno: errno) }
    defer { close(fd) }
    let zeros = [UInt8](repeating: 0, count: bytes)
    var written = 0
    while written < bytes {
        let n = zeros.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes - written) }
        if n > 0 { written += n; continue }
        if n < 0 && errno == EINTR { continue }
        if n < 0 && errno != ENOSPC { throw SystemError(call: "write(2)", path: path, errno: errno) }
        return
    }
}

/// Every entry of a directory: a file's size and a hash of its contents, or "directory".
func listing(_ directory: String) throws -> [String: String] {
    var entries: [String: String] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
        let path = directory + "/" + name
        var info = stat()
        guard lstat(path, &info) == 0 else { continue }
        if info.st_mode & S_IFMT == S_IFDIR {
            entries[name] = "directory"
            continue
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
        for byte in try Data(contentsOf: URL(fileURLWithPath: path)) {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        entries[name] = "\(info.st_size) bytes, \(String(hash, radix: 16))"
    }
    return entries
}

/// Runs `tandem ARGS…` with `directory` as its current directory.
func runTandem(in directory: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    let spawned = try Spawned(executable: "/bin/sh", ["-c", #"cd "$0" && exec "$@""#, directory, tandemBinary] + arguments)
    let status = try spawned.wait()
    return (status, spawned.output.joined(separator: "\n"), spawned.stderr)
}

/// How to run a program as user and group 65534 (nobody), or nil when no tool for it exists.
let unprivileged: [String]? = {
    if getuid() != 0 { return [] }
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") {
        return ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    }
    for runuser in ["/usr/sbin/runuser", "/sbin/runuser"] where FileManager.default.isExecutableFile(atPath: runuser) {
        return [runuser, "-u", "nobody", "--"]
    }
    return nil
}()

/// Runs `tandem ARGS…` as an unprivileged user (root would pass every permission check).
func runTandemUnprivileged(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    let prefix = unprivileged ?? []
    let spawned =
        prefix.isEmpty
        ? try Spawned(arguments)
        : try Spawned(executable: prefix[0], Array(prefix.dropFirst()) + [tandemBinary] + arguments)
    let status = try spawned.wait()
    return (status, spawned.output.joined(separator: "\n"), spawned.stderr)
}

let twoTables = Schema(tables: notesSchema.tables + [TableSchema(name: "todos", columns: [.text("what")])])

/// The changes a change handler was told, in order.
final class SeenChanges: Sendable {
    private let changes = Mutex<[DatabaseChange]>([])
    func append(_ change: DatabaseChange) { changes.withLock { $0.append(change) } }
    func withLock<T>(_ body: (inout [DatabaseChange]) -> T) -> T { changes.withLock { body(&$0) } }
}

/// A database at `path` whose observer hears other processes' commits by their wake-ups alone
/// (no backstop poll during a test), and the changes its change handler is told, collected
/// while the returned token lives.
func databaseWithoutPoll(at path: String, schema: Schema = twoTables) throws -> (
    db: SharedDatabase, seen: SeenChanges, token: AnyDatabaseCancellable
) {
    var configuration = Configuration()
    configuration.changePollInterval = .seconds(3600)
    let db = try SharedDatabase(path: path, schema: schema, configuration: configuration)
    let seen = SeenChanges()
    let token = try db.addChangeHandler { change in seen.append(change) }
    return (db, seen, token)
}

/// A Python process (the sqlite3 module) that holds BEGIN EXCLUSIVE for `seconds`, printing "locked".
func pythonLockHolder(path: String, seconds: Double, mode: String = "EXCLUSIVE", sql: String = "") throws -> Spawned {
    let script = """
        import sqlite3, sys, time
        c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
        c.execute("BEGIN \(mode)")
        \(sql.isEmpty ? "" : "c.execute(\"\(sql)\")")
        print("locked", flush=True)
        time.sleep(float(sys.argv[2]))
        c.execute("COMMIT")
        print("released", flush=True)
        """
    return try Spawned(executable: "/usr/bin/env", ["python3", "-c", script, path, String(seconds)])
}

/// Replaces a closed database file (and its WAL) with a backup copy, as restoring from a backup does.
func restore(_ backup: String, to path: String) throws {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    try FileManager.default.copyItem(atPath: backup, toPath: path)
}

func sqliteShell(_ path: String, _ sql: String) throws {
    let shell = try Spawned(executable: "/usr/bin/sqlite3", [path, sql])
    guard try shell.wait() == 0 else { throw TestFailure("sqlite3 failed: \(sql): \(shell.stderr)") }
}

/// Two client databases and an embedded backend in a temporary directory.
struct SyncFixture {
    let dir: TemporaryDirectory
    let a: SharedDatabase
    let b: SharedDatabase
    let serverPath: String
    var backendURL: String { "sqlite:" + serverPath }

    init(schema: Schema = notesSchema) throws {
        dir = try TemporaryDirectory()
        a = try SharedDatabase(path: dir.path("a.db"), schema: schema)
        b = try SharedDatabase(path: dir.path("b.db"), schema: schema)
        serverPath = dir.path("server.db")
    }

    /// Starts `tandem app` on `db` and waits until it owns sync.
    func startOwner(_ db: SharedDatabase, url: String? = nil) throws -> Spawned {
        let app = try Spawned(["app", db.path, "--backend", url ?? backendURL, "--json"])
        try app.waitForLine("became_owner") { $0.contains("became_owner") }
        return app
    }

    func serverRows() throws -> [(table: String, id: String, data: String)] {
        try EmbeddedBackend(path: serverPath).rows()
    }
}

/// The PostgreSQL server the tests use (`TANDEM_TEST_POSTGRES_URL`, which `Tools/test` sets to a
/// throwaway cluster), or nil when there is none.
enum TestPostgres {
    static var url: String? { ProcessInfo.processInfo.environment["TANDEM_TEST_POSTGRES_URL"] }

    /// A new, empty database on the test server, as a connection URL, set up for `schema`.
    static func database(schema: Schema) throws -> String {
        let database = try emptyDatabase()
        try PostgresBackend.setup(conninfo: database, schema: schema)
        return database
    }

    /// A new database on the test server that nothing was set up in, as a connection URL.
    static func emptyDatabase() throws -> String {
        guard let admin = url else { throw TestFailure("TANDEM_TEST_POSTGRES_URL is not set") }
        let name = "tandem_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        try PostgresConnection(admin).execute("CREATE DATABASE \(name)")
        return admin.replacingOccurrences(of: "/postgres?", with: "/\(name)?")
    }

    /// A new database holding what `pg_dump` of `source` restores into it (a server moved to
    /// another cluster or service), as a connection URL.
    static func restoredCopy(of source: String) throws -> String {
        let copy = try emptyDatabase()
        let bin = (try FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")).sorted().last.map { "/usr/lib/postgresql/\($0)/bin" } ?? "/usr/bin"
        let restore = try Spawned(executable: "/bin/sh", ["-c", "\"$0/pg_dump\" --no-owner -d \"$1\" | \"$0/psql\" -q -v ON_ERROR_STOP=1 -d \"$2\"", bin, source, copy])
        guard try restore.wait(timeout: 60) == 0 else { throw TestFailure("pg_dump | psql failed: \(restore.stderr)") }
        return copy
    }
}

/// A digest of a database's main file and of its `-wal` ("absent" when there is none), read by a
/// child process: a descriptor of the file opened and closed in the test process would drop
/// every POSIX lock the process holds on it (SQLite's among them), and a command would then take
/// itself for the file's last user and checkpoint it as it closes.
func databaseFingerprint(_ path: String) throws -> [String] {
    try [path, path + "-wal"].map { file in
        guard FileManager.default.fileExists(atPath: file) else { return "absent" }
        let digest = try Spawned(executable: "/usr/bin/sha256sum", [file])
        guard try digest.wait() == 0, let line = digest.output.first else { throw TestFailure("sha256sum \(file): \(digest.stderr)") }
        return String(line.prefix(64))
    }
}

/// An iterator held by reference, so that a bounded wait's child task can advance it.
/// `@unchecked Sendable`: one task uses it at a time (the waiting one, then its caller).
final class IteratorBox<Iterator: AsyncIteratorProtocol>: @unchecked Sendable {
    var iterator: Iterator
    init(_ iterator: Iterator) { self.iterator = iterator }
}

extension AsyncIteratorProtocol where Element: Sendable, Self: SendableMetatype {
    /// The next element, waiting at most `seconds`; a test that waits for one that never comes
    /// fails, naming `what`, instead of hanging.
    mutating func next(within seconds: Double = 10, _ what: String) async throws -> Element? {
        let box = IteratorBox(self)
        defer { self = box.iterator }
        return try await within(seconds, what) { try await box.iterator.next() }
    }
}

/// `body`'s result, waiting at most `seconds` for it (it is cancelled then, and the wait fails
/// naming `what`).
func within<T: Sendable>(_ seconds: Double = 10, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw TestFailure("timed out after \(seconds) s waiting for \(what)") }
        return value
    }
}

/// `tandem sync DB --backend URL` in this process, for tests about what a pass does rather than
/// about the command (`CLI/` tests run the command): one pass through the backend `url` names,
/// binding `db` to it; true when the pass set no transaction aside (the command's status 0).
func syncOnce(_ db: SharedDatabase, _ url: String) throws -> Bool {
    let before = Set(try db.uploadQueue.rejected().map(\.transaction.transactionID))
    // PostgreSQL's kind is not registered in the test process (BackendURLTests reads the list).
    if url.hasPrefix("postgres") {
        _ = try db.sync.once(with: PostgresBackend(conninfo: url), backendName: ConnectionString.redacted(ConnectionString.normalized(url)))
    } else {
        _ = try db.sync.once(url: BackendURL(url))
    }
    return try db.uploadQueue.rejected().allSatisfy { before.contains($0.transaction.transactionID) }
}

/// Runs `tandem ARGS…` inside the test process (``CommandLineTool/runCaptured(_:standardInput:)``)
/// with `input` on its standard input: its exit status and output as ``runTandem(_:environment:timeout:)``
/// gives a process's, without starting one. For what a command does and says; a test of
/// processes (signals, exit codes of a crash, several processes on one file) starts them.
@discardableResult
func tandem(_ arguments: [String], input: String = "", timeout: Double = 60) throws -> (status: Int32, stdout: String, stderr: String) {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<(status: Int32, output: [UInt8], errors: [UInt8])?>(nil)
    Task(executorPreference: GlobalQueueExecutor.shared) {
        let ran = await CommandLineTool.runCaptured(arguments, standardInput: Data(input.utf8))
        result.withLock { $0 = ran }
        done.signal()
    }
    guard done.wait(timeout: .now() + timeout) == .success, let ran = result.withLock({ $0 }) else {
        throw TestFailure("`tandem \(arguments.joined(separator: " "))` did not end within \(timeout) s")
    }
    // Lines as ``Spawned`` reads them: stdout's joined by newlines, stderr's each ended by one.
    let lines = { (bytes: [UInt8]) -> [String] in
        var lines = bytes.split(separator: 10, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        if bytes.last == 10 || bytes.isEmpty { lines.removeLast() }
        return lines
    }
    return (ran.status, lines(ran.output).joined(separator: "\n"), lines(ran.errors).map { $0 + "\n" }.joined())
}

/// Runs a task's jobs on Dispatch's global queue, never on the cooperative pool: a test blocked
/// on a command it runs inside itself (``tandem(_:input:timeout:)``) holds a thread of that pool,
/// and on 2 cores the command would wait for one.
final class GlobalQueueExecutor: TaskExecutor {
    static let shared = GlobalQueueExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
