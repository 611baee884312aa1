import Foundation
import Synchronization
import Tandem

/// The second client's processes in a stress run with a backend (its app, its watcher and, with
/// several rows per transaction, its atomicity watcher), which a restore stops and starts again.
final class PeerSide: Sendable {
    let path: String
    private let run: StressRun
    private let partial: Bool
    private let processes = Mutex<[ChildProcess]>([])

    init(run: StressRun, path: String, partial: Bool) throws {
        self.run = run
        self.path = path
        self.partial = partial
        try start()
    }

    func start() throws {
        var started = [try run.startApp(path)]
        started.append(try run.startWatcher(path) { s, line, at in StressRun.record(&s.peerWatcher, line: line, at: at) })
        if partial { started.append(try run.startPartialWatcher(path, label: "the second client")) }
        processes.withLock { $0 += started }
    }

    /// Stops every process of the second client and waits for them.
    func stop() {
        let running = processes.withLock { list -> [ChildProcess] in
            defer { list = [] }
            return list
        }
        for process in running { process.terminate() }
        for process in running { process.wait() }
        run.state.withLock { s in s.apps.removeAll { app in running.contains { $0 === app } } }
    }

    var current: [ChildProcess] { processes.withLock { $0 } }
}

/// The faults a stress run with a backend and chaos makes besides kills and pauses, each once,
/// by progress: the second client is backed up at a quarter of the transactions and started
/// again from that backup at half (its app and watchers stopped, the file restored, all started
/// again); with `--restart-server CMD`, CMD runs at three fifths (a server restart or crash,
/// `pg_ctl restart -m immediate`, say).
struct StressFaults {
    let run: StressRun
    let peer: PeerSide
    let restartCommand: String?
    let total: Int

    func run() async {
        let backup = peer.path + ".backup"
        defer { try? FileManager.default.removeItem(atPath: backup) }
        guard await reach(total / 4) else { return }
        do {
            let db = try SharedDatabase(path: peer.path)
            defer { db.close() }
            try db.backup(to: backup)
        } catch {
            return problem("backing up the second client failed: \(error)")
        }
        guard await reach(total / 2) else { return }
        peer.stop()
        do {
            try await restoreWhenIdle(backup)
            run.state.withLock { $0.peerRestores += 1 }
        } catch {
            problem("restoring the second client from its backup failed: \(error)")
        }
        do { try peer.start() } catch { return problem("restarting the second client failed: \(error)") }
        guard let restartCommand, await reach(total * 3 / 5) else { return }
        do {
            // posix_spawn, not Foundation's Process (see Subprocess), its output discarded.
            let shell = try Subprocess.spawn("/bin/sh", ["-c", restartCommand], stdout: .discard, stderr: .discard)
            let status = (try? await awaitBlocking { shell.wait() }) ?? -1
            if status == 0 {
                run.state.withLock { $0.serverRestarts += 1 }
            } else {
                problem("--restart-server exited with status \(status)")
            }
        } catch {
            problem("--restart-server could not run: \(error)")
        }
    }

    /// Waits until `count` transactions committed; false when the writers ended first.
    private func reach(_ count: Int) async -> Bool {
        while true {
            let (committed, done) = run.state.withLock { s in (s.commits.reduce(0) { $0 + $1.count }, s.writersDone >= run.options.writers) }
            if committed >= count { return true }
            if done { return false }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
    }

    /// Restores the backup once no process has the second client open any more (its processes
    /// were asked to stop; the file is refused while one still closes it), for up to 30 s.
    private func restoreWhenIdle(_ backup: String) async throws {
        let deadline = Date(timeIntervalSinceNow: 30)
        while true {
            do {
                return try SharedDatabase.restore(from: backup, to: peer.path)
            } catch TandemError.inUse where Date() < deadline {
                try await Task.sleep(nanoseconds: 20_000_000)
            }
        }
    }

    private func problem(_ text: String) {
        run.state.withLock { $0.faultProblems.append(text) }
    }
}
