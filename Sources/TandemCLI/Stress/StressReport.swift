import Foundation
import Tandem

/// The figures and checks of a stress run, for people and as JSON.
struct StressReport {
    var checks: [StressVerifier.Check]
    var transactions = 0
    var seconds = 0.0
    var kills = 0
    var ownerKills = 0
    var ownerPauses = 0
    var peerRestores = 0
    var serverRestarts = 0
    /// The chaos's seed (``StressRun/Options/seed``), to replay its choices.
    var seed: UInt64?
    var commitLatency = Percentiles([])
    var notifyLatency = Percentiles([])
    var peerLatency: Percentiles?
    /// Seconds from the run's first transaction start to each writer's last commit (fairness).
    var writerFinish: [Double] = []

    init(checks: [StressVerifier.Check]) { self.checks = checks }

    var passed: Bool { checks.allSatisfy(\.passed) }
    var throughput: Double { seconds > 0 ? Double(transactions) / seconds : 0 }

    var text: String {
        var lines: [String] = []
        if transactions > 0 {
            lines.append(
                String(
                    format:
                        "transactions committed: %d in %.2f s (%.0f transactions/s); kills: %d writers, %d owners; owner pauses: %d; second client restored from a backup: %d; server restarts: %d",
                    transactions, seconds, throughput, kills, ownerKills, ownerPauses, peerRestores, serverRestarts))
            lines.append(
                "commit latency (lock wait + commit): p50 \(milliseconds(commitLatency.value(50))), p99 \(milliseconds(commitLatency.value(99))), p99.9 \(milliseconds(commitLatency.value(99.9))), max \(milliseconds(commitLatency.largest))"
            )
            if let first = writerFinish.min(), let last = writerFinish.max() {
                lines.append(String(format: "writers finished between %.2f s and %.2f s", first, last))
            }
            lines.append("commit to watcher: p50 \(milliseconds(notifyLatency.value(50))), p99 \(milliseconds(notifyLatency.value(99))) (\(notifyLatency.count) samples)")
            if let peerLatency {
                lines.append(
                    "commit to the second client's watcher: p50 \(milliseconds(peerLatency.value(50))), p99 \(milliseconds(peerLatency.value(99))) (\(peerLatency.count) samples)")
            }
        }
        for check in checks { lines.append("\(check.passed ? "ok    " : "FAILED") \(check.name): \(check.detail)") }
        let replay = seed.map { " (seed \($0): --seed \($0) replays the chaos's choices)" } ?? ""
        lines.append((passed ? "all checks passed" : "FAILED: " + checks.filter { !$0.passed }.map(\.name).joined(separator: ", ")) + replay)
        return lines.joined(separator: "\n") + "\n"
    }

    var json: String {
        func ms(_ p: Percentiles) -> String {
            func v(_ x: Double?) -> String { x.map { String(format: "%.3f", $0 / 1000) } ?? "null" }
            return Output.object([("p50", v(p.value(50))), ("p99", v(p.value(99))), ("p99_9", v(p.value(99.9))), ("max", v(p.largest)), ("samples", String(p.count))])
        }
        var pairs: [(String, String)] = [
            ("passed", String(passed)),
            ("failed_checks", Output.json(JSONValue.array(checks.filter { !$0.passed }.map { .string($0.name) }))),
            ("transactions", String(transactions)), ("seconds", String(format: "%.3f", seconds)),
            ("throughput_tps", String(format: "%.1f", throughput)), ("kills", String(kills)), ("owner_kills", String(ownerKills)),
            ("owner_pauses", String(ownerPauses)), ("peer_restores", String(peerRestores)), ("server_restarts", String(serverRestarts)),
            ("seed", seed.map { String($0) } ?? "null"),
            ("commit_latency_ms", ms(commitLatency)), ("notify_latency_ms", ms(notifyLatency)),
        ]
        if let peerLatency { pairs.append(("peer_latency_ms", ms(peerLatency))) }
        pairs.append(("writer_finish_s", "[" + writerFinish.map { String(format: "%.3f", $0) }.joined(separator: ",") + "]"))
        pairs.append(
            (
                "checks",
                "["
                    + checks.map {
                        Output.object([("name", Output.jsonString($0.name)), ("passed", String($0.passed)), ("detail", Output.jsonString($0.detail))])
                    }.joined(separator: ",") + "]"
            ))
        return Output.object(pairs)
    }
}
