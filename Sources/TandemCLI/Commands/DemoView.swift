import Foundation

/// What `tandem demo` shows: on a terminal a frame redrawn in place (the latest notes on A and on
/// B with their writer and age, counts, latencies so far); otherwise one summary line at a time.
enum DemoView {
    static func summaryLine(_ s: DemoCommand.Shared) -> String {
        "A: \(s.views["A"]!.notes) notes (\(s.views["A"]!.done) done)  |  B: \(s.views["B"]!.notes) notes (\(s.views["B"]!.done) done)  |  uploaded \(s.uploaded) transactions"
    }

    static func frame(_ s: DemoCommand.Shared, now: Int64) -> [String] {
        var lines: [String] = []
        for name in ["A", "B"] {
            let view = s.views[name]!
            let latency = Percentiles(s.latencies[name]!)
            let label = name == "A" ? "commit to watcher" : "commit on A to watcher on B"
            lines.append("\(name).db  \(view.notes) notes, \(view.done) done  (\(label): median \(milliseconds(latency.value(50))), p99 \(milliseconds(latency.value(99))))")
            let latest = s.latest[name]!
            for index in 0..<5 {
                guard index < latest.count else { lines.append(""); continue }
                let note = latest[index]
                let age = max(0, Double(now - note.writtenAt) / 1e6)
                let title = note.title.padding(toLength: 24, withPad: " ", startingAt: 0)
                lines.append("  \(note.done ? "✓" : "·") \(title) \(note.author.padding(toLength: 10, withPad: " ", startingAt: 0)) \(String(format: "%5.1f s ago", age))")
            }
        }
        lines.append("uploaded from A: \(s.uploaded) transactions")
        return lines
    }
}
