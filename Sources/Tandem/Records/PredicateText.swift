import Foundation

/// `starts(with:)` on strings, as a `#Predicate` evaluates it: by Characters, each compared by
/// canonical equivalence (`"e\u{301}"` does not start with `"e"`; a prefix may hold NUL). A
/// column with an ASCII prefix that has no other spelling (``TextEquality``) must start with the
/// prefix's bytes, so the range of those bytes comes first, which an index serves.
extension PredicateExpressions.SequenceStartsWith: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        guard Base.Output.self == String.self, Prefix.Output.self == String.self else { throw Untranslatable(node: self) }
        let (text, start) = (try context.operand(base), try context.operand(prefix))
        let exact = context.function(SwiftStringFunctions.startsWith, text.sql, start.sql)
        guard let column = text.column, case .text(let p)? = start.constant?.argument, !p.isEmpty, TextEquality.hasNoOtherSpelling(p) else { return exact }
        var range = SQLFragment(text: "(") + column + SQLFragment(text: " >= ?", arguments: [.text(p)])
        if let above = TextEquality.bytesAbove(prefix: p) { range = range + SQLFragment(text: " AND ") + column + SQLFragment(text: " < ?", arguments: [.text(above)]) }
        return range + SQLFragment(text: " AND ") + exact + SQLFragment(text: ")")
    }
}

/// `contains` on strings, as a `#Predicate` evaluates it: by Characters (`"a\r\nb"` does not
/// contain `"\n"`, nor `"🇺🇸🇸🇪"` `"🇸🇸"`); an empty string is contained.
extension PredicateExpressions.CollectionContainsCollection: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        guard Base.Output.self == String.self, Other.Output.self == String.self else { throw Untranslatable(node: self) }
        return context.function(SwiftStringFunctions.contains, try context.translate(base), try context.translate(other))
    }
}

/// When text equality can be SQLite's own, which an index serves.
enum TextEquality {
    /// True when no other text is canonically equivalent to `text`, so that Swift's `==` with it
    /// is byte equality: ASCII text without the three characters that a non-ASCII character is
    /// canonically equivalent to (U+212A KELVIN SIGN is `K`, U+037E GREEK QUESTION MARK is `;`,
    /// U+1FEF GREEK VARIA is `` ` ``). Every other string equivalent to ASCII text holds one of those.
    static func hasNoOtherSpelling(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 < 0x80 && !asciiWithOtherSpellings.contains($0) }
    }

    /// The least ASCII text greater than every text that starts with the bytes of `prefix`
    /// (ASCII): its last character below DEL incremented, what follows dropped; nil when every
    /// character is DEL.
    static func bytesAbove(prefix: String) -> String? {
        var bytes = Array(prefix.utf8)
        guard let last = bytes.lastIndex(where: { $0 < 0x7F }) else { return nil }
        bytes[last] += 1
        return String(decoding: bytes[...last], as: UTF8.self)
    }

    /// The ASCII characters with a canonically equivalent non-ASCII character.
    static let asciiWithOtherSpellings: Set<UInt8> = [UInt8(ascii: "K"), UInt8(ascii: ";"), UInt8(ascii: "`")]
}

/// A key path that reads a stored column of the predicate's record (not a relationship).
protocol ColumnKeyPath {
    /// The column as stored, as the view shows it (a `DefaultedRecord`'s default applied); nil
    /// when the key path reads no column of a bound record.
    func storedColumn(_ context: PredicateContext) -> SQLFragment?
}

extension PredicateExpressions.KeyPath: ColumnKeyPath {
    func storedColumn(_ context: PredicateContext) -> SQLFragment? {
        guard let variable = root as? PredicateExpressions.Variable<Root.Output>, let binding = context.binding(for: variable.key),
            binding.layout.relation(for: keyPath) == nil, let column = try? binding.layout.column(for: keyPath)
        else { return nil }
        return binding.layout.readExpression(of: column, qualifiedBy: binding.alias)
    }
}
