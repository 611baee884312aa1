import Foundation
import Synchronization

/// A line on standard error that shows how far a long command has got, redrawn in place (`\r`)
/// at most ten times a second: what it has done (rows, transactions, bytes), its rate, the time
/// since it began and, when the total is known, the share done and an estimate of the time left.
///
/// It is drawn only when standard error is a terminal and the command's output is for people:
/// with `--json`, or with standard error a file or a pipe, it prints nothing. ``finish()``
/// clears it, so what the command prints next starts on a clean line.
final class ProgressLine: Sendable {
    enum Unit: Sendable {
        case rows, transactions, bytes
    }

    let label: String
    let unit: Unit
    let enabled: Bool
    private let start = ContinuousClock.now
    private let state = Mutex<(drawnAt: ContinuousClock.Instant?, visible: Bool)>((nil, false))

    /// - Parameters:
    ///   - label: what runs (`import notes`).
    ///   - quiet: true for output meant for programs (`--json`).
    init(_ label: String, unit: Unit, quiet: Bool = false) {
        self.label = label
        self.unit = unit
        enabled = !quiet && StandardStreams.isTerminal(STDERR_FILENO)
    }

    /// Shows `count` done, of `total` when known (or `fraction` done, when only that is known).
    func update(_ count: Int64, total: Int64? = nil, fraction: Double? = nil, detail: String? = nil) {
        guard enabled else { return }
        let now = ContinuousClock.now
        let draw = state.withLock { state -> Bool in
            if let drawn = state.drawnAt, now - drawn < .milliseconds(100) { return false }
            state.drawnAt = now
            state.visible = true
            return true
        }
        guard draw else { return }
        let share = fraction ?? total.flatMap { $0 > 0 ? Double(count) / Double($0) : nil }
        var text = Self.text(label: label, unit: unit, count: count, elapsed: now - start, fraction: share)
        if let detail { text += ", " + detail }
        Output.error("\r" + fitted(text) + "\u{1B}[K")
    }

    /// Clears the line.
    func finish() {
        guard enabled, state.withLock({ $0.visible }) else { return }
        Output.error("\r\u{1B}[K")
    }

    /// The line's text: `import notes: 412,000 rows, 137,333 rows/s, 3.0 s, 41 %, about 4 s left`.
    static func text(label: String, unit: Unit, count: Int64, elapsed: Duration, fraction: Double?) -> String {
        let seconds = elapsed.seconds
        let rate = seconds > 0 ? Double(count) / seconds : 0
        var parts: [String]
        switch unit {
        case .bytes: parts = [megabytes(Double(count)), megabytes(rate) + "/s"]
        case .rows: parts = [grouped(count) + " rows", grouped(Int64(rate.rounded())) + " rows/s"]
        case .transactions: parts = [grouped(count) + " transactions", grouped(Int64(rate.rounded())) + " tx/s"]
        }
        parts.append(duration(seconds))
        if let fraction, fraction > 0 {
            parts.append("\(Int((min(fraction, 1) * 100).rounded(.down))) %")
            if fraction < 1, seconds >= 1 { parts.append("about " + duration(seconds * (1 - fraction) / fraction) + " left") }
        }
        return label + ": " + parts.joined(separator: ", ")
    }

    /// `1,234,567`.
    static func grouped(_ value: Int64) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result += "," }
            result.append(digit)
        }
        return (value < 0 ? "-" : "") + result
    }

    /// `3.0 s`, `42 s`, `2 min 5 s`.
    static func duration(_ seconds: Double) -> String {
        if seconds < 10 { return String(format: "%.1f s", seconds) }
        if seconds < 60 { return "\(Int(seconds.rounded())) s" }
        let whole = Int(seconds.rounded())
        return "\(whole / 60) min \(whole % 60) s"
    }

    /// `12.3 MB` (10^6 bytes).
    static func megabytes(_ bytes: Double) -> String { String(format: "%.1f MB", bytes / 1e6) }

    /// The text cut to the terminal's width, so that it never wraps (a wrapped line cannot be
    /// redrawn with `\r`).
    private func fitted(_ text: String) -> String {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 1, text.count >= Int(size.ws_col) else { return text }
        return String(text.prefix(Int(size.ws_col) - 1))
    }
}
