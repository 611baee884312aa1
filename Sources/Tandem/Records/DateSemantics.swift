import Foundation

/// Dates as a fetch reads them. A `Date` is stored in a `real` column as its seconds since
/// 1970, the double nearest it (`timeIntervalSince1970`), what other programs and PostgreSQL's
/// `to_timestamp` read; a fetch reads `Date(timeIntervalSince1970: stored)`, whose seconds
/// since 2001 are `stored - 978307200` in double arithmetic. `Date` itself counts from 2001, so
/// that conversion can move a written `Date` by up to one unit in the last place of the larger of
/// the two counts (2^-22 s, 0.24 µs, for dates from 1933 to 2038); a `Date` made from seconds
/// since 1970, as every `Date` a fetch returns is, reads back identically.
///
/// Predicates compare what a fetch reads: a stored value as `stored - 978307200.0` (the same
/// IEEE subtraction SQLite performs), a constant as its own seconds since 2001. Against a
/// column, a constant becomes the range of stored values that read as less, equal or greater
/// (``storedValues(readingAs:)``), so an index on the column still serves the comparison.
enum DateSemantics {
    /// Seconds from 1970 to 2001.
    static let offset = Date.timeIntervalBetween1970AndReferenceDate

    /// A stored value as the `Date` a fetch reads it, in seconds since 2001.
    static func asRead(_ stored: SQLFragment) -> SQLFragment {
        SQLFragment(text: "(") + stored + SQLFragment(text: " - \(offset))")
    }

    /// The seconds since 2001 a fetch reads from a stored value.
    static func read(_ stored: Double) -> Double { Date(timeIntervalSince1970: stored).timeIntervalSinceReferenceDate }

    /// The stored values that read as `t` seconds since 2001 are those from `lowest` to
    /// `highest`. `lowest` is the least stored value reading as `t` or more (nil when none
    /// does), `highest` the greatest reading as `t` or less (nil when none does). Reading is
    /// monotonic (rounding is), so a binary search over the doubles in order finds both.
    static func storedValues(readingAs t: Double) -> (lowest: Double?, highest: Double?) {
        let (first, last) = (key(-.greatestFiniteMagnitude), key(.greatestFiniteMagnitude))
        // The least key whose value reads as t or more.
        var (low, high) = (first, last + 1)
        while low < high {
            let middle = low &+ half(low, high)
            if read(value(middle)) >= t { high = middle } else { low = middle + 1 }
        }
        let lowest = low <= last ? value(low) : nil
        // The greatest key whose value reads as t or less.
        (low, high) = (first - 1, last)
        while low < high {
            let middle = high &- half(low, high)
            if read(value(middle)) <= t { low = middle } else { high = middle - 1 }
        }
        let highest = low >= first ? value(low) : nil
        return (lowest, highest)
    }

    /// Half the distance between two keys (which can exceed `Int64.max`), rounded down.
    private static func half(_ low: Int64, _ high: Int64) -> Int64 {
        Int64(bitPattern: (UInt64(bitPattern: high) &- UInt64(bitPattern: low)) / 2)
    }

    /// Finite doubles in order as integers (-0.0 and 0.0 share 0).
    private static func key(_ d: Double) -> Int64 {
        let bits = Int64(bitPattern: d.bitPattern)
        return bits >= 0 ? bits : Int64.min &- bits
    }

    private static func value(_ key: Int64) -> Double {
        key >= 0 ? Double(bitPattern: UInt64(key)) : -Double(bitPattern: UInt64(-key))
    }
}
