/// Numbers written as text, as SQLite's numeric affinity reads them.
///
/// Related SQLite documentation: https://www.sqlite.org/datatype3.html#type_affinity
package enum NumberText {
    /// The characters SQLite skips around a number in text: space, tab, newline, vertical tab,
    /// form feed and carriage return.
    package static let spaces: Set<Unicode.Scalar> = [" ", "\t", "\n", "\u{0B}", "\u{0C}", "\r"]

    /// `text` without the ``spaces`` around it.
    package static func trimmed(_ text: String) -> String {
        var scalars = Substring.UnicodeScalarView(text.unicodeScalars)
        while let first = scalars.first, spaces.contains(first) { scalars.removeFirst() }
        while let last = scalars.last, spaces.contains(last) { scalars.removeLast() }
        return String(scalars)
    }
}
