import Foundation

/// Percentiles of a sample (nearest rank), in the sample's unit.
struct Percentiles {
    private let sorted: [Double]
    init(_ values: [Double]) { sorted = values.sorted() }
    var count: Int { sorted.count }
    func value(_ p: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }
    var largest: Double? { sorted.last }
}

/// Microseconds shown as milliseconds with two decimals, or n/a.
func milliseconds(_ microseconds: Double?) -> String {
    guard let microseconds else { return "n/a" }
    return String(format: "%.2f ms", microseconds / 1000)
}
