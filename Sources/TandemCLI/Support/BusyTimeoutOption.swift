import Foundation
import Synchronization
import Tandem

/// `--busy-timeout DURATION`, which every command takes before `--`: how long its writes wait for
/// another process's write transaction (an `import`, a `tandem run`) before they fail with
/// `SQLITE_BUSY`; 5 s unless given (``Configuration/busyTimeout``).
///
/// Related SQLite documentation: https://www.sqlite.org/c3ref/busy_timeout.html
enum BusyTimeoutOption {
    private static let chosen = Mutex<Duration?>(nil)

    /// `words` (a command's arguments) without the option, which ``apply(to:)`` then uses.
    /// - Throws: ``Arguments/UsageError`` for a value that is not a duration, or a missing one.
    static func extract(from words: [String]) throws -> [String] {
        var rest: [String] = []
        var index = 0
        while index < words.count {
            let word = words[index]
            if word == "--" {
                rest += words[index...]
                break
            }
            let value: String?
            if word == "--busy-timeout" {
                guard index + 1 < words.count else { throw Arguments.UsageError(message: "--busy-timeout needs a duration such as 30s, 10m or 500ms") }
                value = words[index + 1]
                index += 2
            } else if word.hasPrefix("--busy-timeout=") {
                value = String(word.dropFirst("--busy-timeout=".count))
                index += 1
            } else {
                rest.append(word)
                index += 1
                continue
            }
            guard let text = value, let seconds = DurationArgument.seconds(text), seconds <= 86_400 * 365 else {
                throw Arguments.UsageError(message: "--busy-timeout takes a duration such as 30s, 10m or 500ms, not '\(value ?? "")'")
            }
            let timeout = Duration.milliseconds(Int64((seconds * 1000).rounded()))
            if let captured = CapturedStreams.current {
                captured.busyTimeout.withLock { $0 = timeout }
            } else {
                chosen.withLock { $0 = timeout }
            }
        }
        return rest
    }

    /// The busy timeout the command line chose, if it chose one.
    static var given: Duration? {
        if let captured = CapturedStreams.current { return captured.busyTimeout.withLock { $0 } }
        return chosen.withLock { $0 }
    }

    /// Puts the chosen busy timeout, if any, into `configuration`.
    static func apply(to configuration: inout Configuration) {
        if let timeout = given { configuration.busyTimeout = timeout }
    }
}

/// Durations on the command line: `500ms`, `90s`, `30m`, `12h`, `7d`, or a number of seconds.
enum DurationArgument {
    /// `text` in seconds; nil when it is not a finite, non-negative duration.
    static func seconds(_ text: String) -> Double? {
        let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        let unit = units.first { text.hasSuffix($0.suffix) && Double(text.dropLast($0.suffix.count)) != nil }
        guard let number = Double(unit.map { String(text.dropLast($0.suffix.count)) } ?? text), number.isFinite, number >= 0 else { return nil }
        return number * (unit?.seconds ?? 1)
    }
}
