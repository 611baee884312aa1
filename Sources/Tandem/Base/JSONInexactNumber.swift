import Foundation

/// A JSON number that neither an `Int64` nor a `Double` holds exactly: one past ±1.8e308
/// (`1e400`, which would become infinity), or an integer beyond 64 bits that the nearest
/// `Double` changes (`18446744073709551617`). Where a user's JSON becomes stored values (an
/// import, `--args-json`) such a number is refused rather than rounded.
public struct JSONInexactNumber: Error, Equatable, CustomStringConvertible {
    /// The number as written.
    public let literal: String
    /// Where it stands in the parsed text: keys and `[index]`es from the outside in.
    public internal(set) var path: [String] = []

    /// Nil when `value`, read from `literal`, is exact enough: a finite real, or an integer the
    /// `Double` holds exactly (2^63, say).
    init?(literal: String, isInteger: Bool, value: Double) {
        self.literal = literal
        if !value.isFinite { return }
        guard isInteger else { return nil }
        let digits = literal.drop { $0 == "-" }
        if String(format: "%.0f", value.magnitude) == digits { return nil }
    }

    /// `tags[0].n`, or empty at the top.
    public var keyPath: String {
        path.reduce("") { $0.isEmpty || $1.hasPrefix("[") ? $0 + $1 : $0 + "." + $1 }
    }

    /// Why it is refused, without where.
    public var reason: String {
        let shown = literal.count > 60 ? String(literal.prefix(57)) + "..." : literal
        guard let value = Double(literal), value.isFinite else {
            return "\(shown) is beyond the range of a real number (about ±1.8e308)"
        }
        return "\(shown) is an integer beyond 64 bits, which no column stores exactly (as a real it would be \(JSONValue.double(value).jsonText))"
    }

    public var description: String { keyPath.isEmpty ? reason : "at \(keyPath): \(reason)" }
}
