import Foundation
import Tandem

/// One stress run from start to report: start processes, wait for the writers, let sync and the
/// watchers settle, stop everything, save the log and verify.
struct StressExecution {
    let options: StressRun.Options
    let database: SharedDatabase
    let peer: SharedDatabase?

    static func embeddedServerPath(_ url: String) -> String? {
        guard let parsed = try? BackendURL(url), parsed.scheme == "sqlite" else { return nil }
        return parsed.location
    }

    func run() async throws -> StressReport {
        let run = StressRun(options: options)
        var background: [ChildProcess] = []
        // The second client is opened again after the run: a restore needs it closed everywhere.
        peer?.close()
        var peerSide: PeerSide?
        if options.backend != nil, let peerPath = options.peerPath {
            _ = try run.startApp(options.path)
            _ = try run.startApp(options.path)  // a stand-by, so that killing the owner fails over
            peerSide = try PeerSide(run: run, path: peerPath, partial: options.history && options.rowsPerTransaction > 1)
        }
        for index in 0..<options.watchers {
            background.append(try run.startWatcher(options.path) { s, line, at in StressRun.record(&s.watchers[index], line: line, at: at) })
        }
        // Atomicity as every process sees it: with several rows per transaction, a watcher on each
        // client reports any result holding part of a transaction.
        if options.history && options.rowsPerTransaction > 1 {
            background.append(try run.startPartialWatcher(options.path, label: "this client"))
        }
        // Writers start once every watcher printed its initial result.
        try await waitFor(seconds: 20, "the watchers' first results") {
            run.state.withLock { s in s.watchers.allSatisfy { !$0.lastLine.isEmpty } && (peerSide == nil || !s.peerWatcher.lastLine.isEmpty) }
        }

        let line = ProgressLine("stress", unit: .transactions, quiet: !options.showProgress)
        for index in 0..<options.writers {
            let thread = Thread { run.superviseWriter(index) }
            thread.name = "tandem.stress-writer-\(index)"
            thread.start()
        }
        let chaos = options.killEveryMilliseconds.map { ms in Task { await run.chaos(every: ms, database: database) } }
        let faults =
            options.killEveryMilliseconds != nil
            ? peerSide.map { side in
                Task {
                    await StressFaults(run: run, peer: side, restartCommand: options.restartServerCommand, total: options.writers * options.transactions).run()
                }
            } : nil
        func showProgress() {
            let (committed, kills) = run.progress()
            line.update(
                Int64(committed), total: Int64(options.writers * options.transactions),
                detail: options.killEveryMilliseconds == nil ? nil : "\(kills) kill\(kills == 1 ? "" : "s")")
        }
        while run.state.withLock({ $0.writersDone < options.writers }) {
            try await Task.sleep(nanoseconds: 200_000_000)
            showProgress()
        }
        await chaos?.value
        await faults?.value
        line.finish()
        let peer = try options.peerPath.map { try SharedDatabase(path: $0) }

        var settleProblems: [String] = []
        if let peer {
            let expected = try await database.read { try $0.scalar("SELECT count(*) FROM stress").int64Value ?? 0 }
            do {
                try await waitFor(seconds: 120, "the upload queue to drain and the second client to hold \(expected) rows") {
                    (try? database.uploadQueue.pendingCount()) == 0
                        && (try? peer.read { try $0.scalar("SELECT count(*) FROM stress").int64Value }) == expected
                }
            } catch { settleProblems.append("\(error)") }
            // Quiet: this client's owner also downloaded the server's state since its last upload.
            do { try await database.sync.waitUntilSynced(timeout: .seconds(60)) } catch { settleProblems.append("\(error)") }
        }
        let fresh = Output.json(try database.fetchAll(StressRun.watchSQL(writers: options.writers)))
        let peerFresh = try peer.map { Output.json(try $0.fetchAll(StressRun.watchSQL(writers: options.writers))) }
        let converged: Bool
        do {
            try await waitFor(seconds: 10, "the watchers to show the final result") {
                run.state.withLock { s in s.watchers.allSatisfy { $0.lastLine == fresh } && (peerFresh == nil || s.peerWatcher.lastLine == peerFresh) }
            }
            converged = true
        } catch { converged = false }

        // Convergence after quiet: each client holds the server's rows, checked by checksums.
        var verdicts: [String] = []
        if let url = options.backend {
            for (name, db) in [("this client", database)] + (peer.map { [("the second client", $0)] } ?? []) {
                do {
                    let report = try db.sync.verify(url: try BackendURL(url))
                    let table = report.tables.first { $0.name == "stress" }
                    if !report.agrees || (table?.pendingRows ?? 0) > 0 || (table?.inFlightRows ?? 0) > 0 {
                        verdicts.append(
                            "\(name): \(report.differences.count) row(s) differ, \(table?.pendingRows ?? 0) pending, \(table?.inFlightRows ?? 0) in flight")
                    }
                } catch {
                    verdicts.append("\(name): \(error)")
                }
            }
        }

        let everyProcess = background + (peerSide?.current ?? []) + run.state.withLock({ $0.apps })
        for process in everyProcess { process.terminate() }
        for process in everyProcess { process.wait() }

        let s = run.state.withLock { $0 }
        let log = StressLog(
            writers: options.writers, transactions: options.transactions, rowsPerTransaction: options.rowsPerTransaction,
            peer: options.peerPath, backend: options.backend, committed: s.commits.map { $0.map(\.txn) })
        try log.save(to: options.path)

        var checks = try StressVerifier(
            log: log, database: database, peer: peer,
            serverPath: options.backend.flatMap(StressExecution.embeddedServerPath)
        ).run()
        checks.insert(
            .init(
                name: "writers-ok", passed: s.writerFailures.isEmpty,
                detail: s.writerFailures.isEmpty ? "every writer finished" : s.writerFailures.prefix(3).joined(separator: "; ")), at: 0)
        let lastLines = s.watchers.map(\.lastLine) + (peer != nil ? [s.peerWatcher.lastLine] : [])
        checks.append(
            .init(
                name: "watchers-converged", passed: converged,
                detail: converged
                    ? "\(lastLines.count) watcher(s) show the final result"
                    : "last results \(lastLines.map { String($0.prefix(80)) }) differ from a fresh query \(fresh.prefix(80))"))
        if !settleProblems.isEmpty { checks.append(.init(name: "sync-settled", passed: false, detail: settleProblems.joined(separator: "; "))) }
        checks += historyChecks(s, verdicts: verdicts)
        if !s.faultProblems.isEmpty { checks.append(.init(name: "faults-made", passed: false, detail: s.faultProblems.joined(separator: "; "))) }

        var report = StressReport(checks: checks)
        let all = s.commits.flatMap { $0 }
        report.transactions = all.count
        report.kills = s.kills
        report.ownerKills = s.ownerKills
        report.ownerPauses = s.ownerPauses
        report.peerRestores = s.peerRestores
        report.serverRestarts = s.serverRestarts
        report.seed = options.seed
        if let first = all.map(\.start).min(), let last = all.map(\.commit).max(), last > first {
            report.seconds = Double(last - first) / 1e6
            report.writerFinish = s.commits.compactMap { $0.map(\.commit).max() }.map { Double($0 - first) / 1e6 }
        }
        report.commitLatency = Percentiles(all.map { Double($0.commit - $0.start) })
        report.notifyLatency = Percentiles(s.watchers.flatMap { StressRun.notifyLatencies(commits: s.commits, watcher: $0) })
        if peer != nil { report.peerLatency = Percentiles(StressRun.notifyLatencies(commits: s.commits, watcher: s.peerWatcher)) }
        return report
    }

    /// The properties of the history: what the writers read after their commits, what the
    /// atomicity watchers saw, and the clients' agreement with the server.
    private func historyChecks(_ s: StressRun.State, verdicts: [String]) -> [StressVerifier.Check] {
        var checks: [StressVerifier.Check] = []
        if options.history {
            for property in ["read-your-writes", "monotonic-reads"] {
                let violations = s.violations[property] ?? []
                checks.append(
                    .init(
                        name: property, passed: violations.isEmpty,
                        detail: violations.isEmpty
                            ? "\(s.readsChecked) reads after commits, none violating it"
                            : "\(violations.count) violation(s): \(violations.prefix(3).joined(separator: "; "))"))
            }
            if options.rowsPerTransaction > 1 {
                checks.append(
                    .init(
                        name: "atomic-while-running", passed: s.partialSeen.isEmpty,
                        detail: s.partialSeen.isEmpty
                            ? "no live query on any client saw part of a transaction"
                            : "\(s.partialSeen.count) result(s) with part of a transaction: \(s.partialSeen.prefix(3).joined(separator: "; "))"))
            }
        }
        if options.backend != nil {
            checks.append(
                .init(
                    name: "converged-verify", passed: verdicts.isEmpty,
                    detail: verdicts.isEmpty ? "every client agrees with the server (tandem verify), nothing pending or in flight" : verdicts.joined(separator: "; ")))
        }
        return checks
    }

    private func waitFor(seconds: Double, _ what: String, _ condition: () -> Bool) async throws {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !condition() {
            if Date() > deadline { throw StressError.timeout("\(what) (after \(Int(seconds)) s)") }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
    }
}
