import Foundation
import Synchronization
import Tandem

/// Runs the processes of a stress test and records what they report.
final class StressRun: Sendable {
    struct Options: Sendable {
        var path: String
        var writers = 8
        var transactions = 500
        var rowsPerTransaction = 1
        var watchers = 2
        var backend: String?
        var killEveryMilliseconds: Int?
        /// The writers' `synchronous` setting (Tandem's default NORMAL; FULL for SQLite's default durability).
        var synchronous = "normal"
        var peerPath: String?
        /// A progress line on a terminal (off with `--json`).
        var showProgress = false
        /// Writers read back after each commit (read-your-writes, monotonic reads); off for
        /// throughput figures that compare with writers that do not read.
        var history = true
        /// The seed of every random choice of the chaos (which writer, whether the owner, how long a pause).
        var seed: UInt64 = 0
        /// A shell command that restarts (or crashes and restarts) the server, run once mid-run.
        var restartServerCommand: String?
    }

    /// One watcher's history: per writer, each increase of the highest transaction seen and when it arrived.
    struct WatcherLog: Sendable {
        var increases: [Int: [(txn: Int, at: Int64)]] = [:]
        var lastLine = ""
    }

    struct State: Sendable {
        var commits: [[(txn: Int, start: Int64, commit: Int64)]] = []
        var watchers: [WatcherLog] = []
        var peerWatcher = WatcherLog()
        /// Violations the writers read, by property ("read-your-writes", "monotonic-reads"), and
        /// partial transactions a watcher saw (by database).
        var violations: [String: [String]] = [:]
        var partialSeen: [String] = []
        var readsChecked = 0
        var ownerPauses = 0
        var peerRestores = 0
        var serverRestarts = 0
        /// Faults that could not be made (``StressFaults``).
        var faultProblems: [String] = []
        var writerFailures: [String] = []
        var kills = 0
        var ownerKills = 0
        var writersDone = 0
        var writerProcesses: [ChildProcess?] = []
        var apps: [ChildProcess] = []
        var killedPIDs: Set<Int32> = []
        /// Per writer: its commits when its running process started.
        var commitsAtStart: [Int] = []
        /// Per writer: its running process is spared by ``StressRun/chaos(every:database:)`` until
        /// it commits (the process before it was killed before committing anything).
        var spared: [Bool] = []
    }

    /// Each writer's highest transaction: one index search per writer (a GROUP BY would scan every row).
    static func watchSQL(writers: Int) -> String {
        """
        WITH RECURSIVE w(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM w WHERE n < \(writers - 1))
        SELECT n AS writer, (SELECT max(txn) FROM stress WHERE writer = n) AS txn FROM w
        """
    }

    let options: Options
    let state: Mutex<State>

    init(options: Options) {
        self.options = options
        var s = State()
        s.commits = Array(repeating: [], count: options.writers)
        s.watchers = Array(repeating: WatcherLog(), count: options.watchers)
        s.writerProcesses = Array(repeating: nil, count: options.writers)
        s.commitsAtStart = Array(repeating: 0, count: options.writers)
        s.spared = Array(repeating: false, count: options.writers)
        state = Mutex(s)
    }

    // MARK: Processes

    func startApp(_ path: String) throws -> ChildProcess {
        // The URL by the environment, never on a command line every user can read (ps).
        let app = ChildProcess(
            label: "app", arguments: ["app", path, "--json"], environment: [BackendURLSource.environmentVariable: options.backend ?? ""], quietStderr: true)
        try app.start { _, _ in }
        state.withLock { $0.apps.append(app) }
        return app
    }

    func startWatcher(_ path: String, record: @escaping @Sendable (inout State, String, Int64) -> Void) throws -> ChildProcess {
        let watcher = ChildProcess(label: "watch", arguments: ["watch", path, StressRun.watchSQL(writers: options.writers), "--json"])
        try watcher.start { [self] line, at in state.withLock { record(&$0, line, at) } }
        return watcher
    }

    static func record(_ log: inout WatcherLog, line: String, at: Int64) {
        log.lastLine = line
        guard let data = line.data(using: .utf8), let rows = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else { return }
        for row in rows {
            guard let writer = (row["writer"] as? NSNumber)?.intValue, let txn = (row["txn"] as? NSNumber)?.intValue else { continue }  // null: nothing yet
            if (log.increases[writer]?.last?.txn ?? -1) < txn { log.increases[writer, default: []].append((txn, at)) }
        }
    }

    /// Runs writer `index` until it has done all its transactions, restarting it after kills.
    func superviseWriter(_ index: Int) {
        while true {
            state.withLock { $0.commitsAtStart[index] = $0.commits[index].count }
            let process = ChildProcess(
                label: "writer-\(index)",
                arguments: [
                    "stress-writer", options.path, "--writer", String(index), "--transactions", String(options.transactions),
                    "--rows-per-transaction", String(options.rowsPerTransaction), "--synchronous", options.synchronous,
                ] + (options.history ? ["--check-reads", String(options.writers)] : []))
            do {
                try process.start { [self] line, _ in
                    if line.hasPrefix("violation ") {
                        let words = line.dropFirst("violation ".count).split(separator: " ", maxSplits: 1)
                        state.withLock { $0.violations[String(words.first ?? ""), default: []].append(String(words.last ?? "")) }
                        return
                    }
                    let parts = line.split(separator: " ").compactMap { Int64($0) }
                    guard parts.count == 3 else { return }
                    state.withLock { s in
                        s.commits[index].append((Int(parts[0]), parts[1], parts[2]))
                        if options.history { s.readsChecked += 1 }
                    }
                }
            } catch {
                state.withLock { $0.writerFailures.append("writer \(index) could not start: \(error)") }
                return
            }
            state.withLock { $0.writerProcesses[index] = process }
            let status = process.wait()
            let killed = state.withLock { s -> Bool in
                s.writerProcesses[index] = nil
                // Every line of the process was read before wait() returned.
                s.spared[index] = s.commits[index].count == s.commitsAtStart[index]
                return s.killedPIDs.contains(process.pid)
            }
            if status == 0 { state.withLock { $0.writersDone += 1 }; return }
            if !killed {
                state.withLock {
                    $0.writersDone += 1; $0.writerFailures.append("writer \(index) exited with status \(status)")
                }
                return
            }
        }
    }

    /// Every `ms` milliseconds, kill -9 a random running writer; with a backend, one time in four
    /// kill -9 the owner instead (a stand-by takes over), and one time in eight pause it
    /// (SIGSTOP) for 3 to 10 intervals, at least half a second, then let it go on (SIGCONT): it
    /// still holds ownership meanwhile, and must go on without losing or repeating an upload.
    /// Every choice comes from ``Options/seed``.
    ///
    /// A writer process needs some milliseconds from its start to its first commit (start-up,
    /// opening the database), far more than a short interval gives each of them between kills
    /// (8 writers killed every 1 ms: one every 8 ms each), so killing any writer starved every
    /// one of them and the run never ended. A writer whose process was killed before it
    /// committed anything is spared until its new process commits once: kills still come at
    /// start-up and in the middle of transactions, and every run ends (at most two kills per
    /// transaction).
    func chaos(every ms: Int, database: SharedDatabase) async {
        var rng = StressRandom(seed: options.seed)
        while state.withLock({ $0.writersDone < options.writers }) {
            try? await Task.sleep(nanoseconds: UInt64(ms) * 1_000_000)
            if options.backend != nil, Int.random(in: 0..<8, using: &rng) == 0,
                let owner = try? database.sync.status().ownerPID,
                let app = state.withLock({ s in s.apps.first { $0.pid == owner && $0.isRunning } })
            {
                let pause = max(500, ms * Int.random(in: 3...10, using: &rng))
                app.pause()
                state.withLock { $0.ownerPauses += 1 }
                try? await Task.sleep(nanoseconds: UInt64(pause) * 1_000_000)
                app.resume()
                continue
            }
            if options.backend != nil, Int.random(in: 0..<4, using: &rng) == 0,
                let owner = try? database.sync.status().ownerPID,
                let app = state.withLock({ s in s.apps.first { $0.pid == owner && $0.isRunning } })
            {
                app.kill9()
                state.withLock { $0.ownerKills += 1 }
                _ = try? startApp(options.path)
                continue
            }
            let victim = state.withLock { s -> ChildProcess? in
                let running = s.writerProcesses.indices.compactMap { index -> ChildProcess? in
                    guard let process = s.writerProcesses[index], process.isRunning else { return nil }
                    return !s.spared[index] || s.commits[index].count > s.commitsAtStart[index] ? process : nil
                }
                guard let victim = running.randomElement(using: &rng) else { return nil }
                s.killedPIDs.insert(victim.pid)
                s.kills += 1
                return victim
            }
            victim?.kill9()
        }
    }

    /// A watcher of `path` that records every result showing a transaction with only part of
    /// its rows (atomicity, as every process on that client sees it).
    func startPartialWatcher(_ path: String, label: String) throws -> ChildProcess {
        let sql = "SELECT count(*) AS partial FROM (SELECT 1 FROM stress GROUP BY writer, txn HAVING count(*) <> \(options.rowsPerTransaction))"
        let watcher = ChildProcess(label: "watch-partial", arguments: ["watch", path, sql, "--json"])
        try watcher.start { [self] line, _ in
            guard line != #"[{"partial":0}]"# else { return }
            state.withLock { $0.partialSeen.append("\(label): \(line)") }
        }
        return watcher
    }

    /// Transactions committed so far, and kills.
    func progress() -> (committed: Int, kills: Int) {
        state.withLock { ($0.commits.reduce(0) { $0 + $1.count }, $0.kills + $0.ownerKills) }
    }

    // MARK: Figures

    /// Latencies (µs) from each reported commit to the first watcher line showing it.
    static func notifyLatencies(commits: [[(txn: Int, start: Int64, commit: Int64)]], watcher: WatcherLog) -> [Double] {
        var result: [Double] = []
        for (writer, list) in commits.enumerated() {
            guard let increases = watcher.increases[writer] else { continue }
            for commit in list {
                var low = 0, high = increases.count
                while low < high {
                    let mid = (low + high) / 2
                    if increases[mid].txn >= commit.txn { high = mid } else { low = mid + 1 }
                }
                if low < increases.count { result.append(Double(max(0, increases[low].at - commit.commit))) }
            }
        }
        return result
    }
}
