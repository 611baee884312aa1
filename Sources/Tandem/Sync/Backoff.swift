/// Capped exponential backoff: 50 ms doubling to 5 s by default. Pure state, no clock.
struct Backoff: Equatable {
    let initial: Double
    let maximum: Double
    private(set) var failures = 0

    init(initial: Double = 0.05, maximum: Double = 5) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The delay in seconds before the next attempt, after one more failure.
    mutating func next() -> Double {
        failures += 1
        return min(maximum, initial * Double(1 << min(failures - 1, 30)))
    }

    mutating func reset() { failures = 0 }
}
