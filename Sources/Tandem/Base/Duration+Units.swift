/// Durations as the C and SQLite interfaces take them.
extension Duration {
    /// The duration in seconds (below a nanosecond dropped).
    package var seconds: Double { Double(components.seconds) + Double(components.attoseconds / 1_000_000_000) / 1e9 }

    /// Whole milliseconds, a fraction rounded up (so that any positive wait waits), clamped to
    /// `Int32` (SQLite's busy timeout); 0 for a negative duration.
    package var clampedMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, self > .zero else { return 0 }
        let fraction = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow ? .max : Int32(clamping: milliseconds + fraction)
    }
}
