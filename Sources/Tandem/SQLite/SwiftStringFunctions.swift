import CSQLite
import Foundation

/// Swift's `String` semantics as SQL functions and a collation, registered on every connection
/// Tandem opens, for the queries of the typed API: SQLite compares text byte for byte, Swift by
/// canonical equivalence (`"e\u{301}" == "é"`) and, in `starts(with:)` and `contains`, by
/// Characters (`"a\r\nb"` holds no `"\n"`).
///
/// - `tandem_string_equal(a, b)`: Swift's `==` (NULL equals NULL only): 1 or 0, never NULL.
/// - `tandem_string_compare(a, b, op)`: Swift's `<`, `<=`, `>`, `>=` (`op` 0 to 3); 0 for NULL.
/// - `tandem_string_starts_with(s, prefix)`, `tandem_string_contains(s, part)`: as a
///   `#Predicate` evaluates them (Characters); 0 for NULL.
/// - `COLLATE tandem_string`: the order of the NFC forms' scalars, which is Swift's `<` wherever
///   that is a consistent order (text in NFC; Swift's `<` on other text is not one, and a
///   collation must be); canonically equivalent text ties.
///
/// Each is exactly what a `#Predicate` evaluates: the general case runs the predicate's own
/// expression node on Swift strings, and byte paths give the same answer where they can tell:
/// text of scalars below U+0300 (every byte below 0xCC) is in NFC, and no two such scalars
/// compose, so two such texts are equal when their bytes are and order as their bytes do; ASCII
/// text equals only text whose other scalars are the three canonically equivalent to ASCII ones
/// (U+037E, U+1FEF, U+212A); and ASCII text's only Character of two scalars is CR LF.
///
/// They are registered `SQLITE_DIRECTONLY`: no view, trigger, index or stored object can use
/// them, so a file stays readable by programs without them (the `sqlite3` shell).
///
/// Related SQLite documentation: https://www.sqlite.org/c3ref/create_function.html
enum SwiftStringFunctions {
    static let equal = "tandem_string_equal"
    static let compare = "tandem_string_compare"
    static let startsWith = "tandem_string_starts_with"
    static let contains = "tandem_string_contains"
    static let collation = "tandem_string"

    /// The operator codes `compare` takes, in `PredicateExpressions.ComparisonOperator` terms.
    static func code(_ op: PredicateExpressions.ComparisonOperator) -> Int64? {
        switch op {
        case .lessThan: return 0
        case .lessThanOrEqual: return 1
        case .greaterThan: return 2
        case .greaterThanOrEqual: return 3
        @unknown default: return nil
        }
    }

    static func register(on db: OpaquePointer) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY
        sqlite3_create_function_v2(
            db, equal, 2, flags, nil,
            { context, _, arguments in
                let (a, b) = (arguments![0], arguments![1])
                let (aNull, bNull) = (sqlite3_value_type(a) == SQLITE_NULL, sqlite3_value_type(b) == SQLITE_NULL)
                let result = aNull || bNull ? aNull && bNull : SwiftStringFunctions.withText(a, b) { SwiftStringFunctions.equal($0, $1) } ?? false
                sqlite3_result_int(context, result ? 1 : 0)
            }, nil, nil, nil)
        sqlite3_create_function_v2(
            db, compare, 3, flags, nil,
            { context, _, arguments in
                let op = sqlite3_value_int(arguments![2])
                let result = SwiftStringFunctions.withText(arguments![0], arguments![1]) { SwiftStringFunctions.compare($0, $1, op) } ?? false
                sqlite3_result_int(context, result ? 1 : 0)
            }, nil, nil, nil)
        sqlite3_create_function_v2(
            db, startsWith, 2, flags, nil,
            { context, _, arguments in
                let result = SwiftStringFunctions.withText(arguments![0], arguments![1]) { SwiftStringFunctions.starts($0, with: $1) } ?? false
                sqlite3_result_int(context, result ? 1 : 0)
            }, nil, nil, nil)
        sqlite3_create_function_v2(
            db, contains, 2, flags, nil,
            { context, _, arguments in
                let result = SwiftStringFunctions.withText(arguments![0], arguments![1]) { SwiftStringFunctions.contains($0, $1) } ?? false
                sqlite3_result_int(context, result ? 1 : 0)
            }, nil, nil, nil)
        sqlite3_create_collation_v2(
            db, collation, SQLITE_UTF8, nil,
            { _, aCount, a, bCount, b in
                let x = UnsafeRawBufferPointer(start: a, count: Int(aCount)).bindMemory(to: UInt8.self)
                let y = UnsafeRawBufferPointer(start: b, count: Int(bCount)).bindMemory(to: UInt8.self)
                return SwiftStringFunctions.order(x, y)
            }, nil)
    }

    /// `body` on the UTF-8 of two values; nil when either is NULL.
    private static func withText(_ a: OpaquePointer?, _ b: OpaquePointer?, _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool) -> Bool? {
        guard sqlite3_value_type(a) != SQLITE_NULL, sqlite3_value_type(b) != SQLITE_NULL else { return nil }
        // sqlite3_value_text converts a number to its text; the length is read after it.
        let x = UnsafeBufferPointer(start: sqlite3_value_text(a), count: Int(sqlite3_value_bytes(a)))
        let y = UnsafeBufferPointer(start: sqlite3_value_text(b), count: Int(sqlite3_value_bytes(b)))
        return body(x, y)
    }

    // MARK: The semantics, on UTF-8 bytes

    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.allSatisfy { $0 < 0x80 }
    }

    /// True when every scalar is below U+0300 (every byte below 0xCC): such text is in NFC.
    static func isSimple(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.allSatisfy { $0 < 0xCC }
    }

    /// True when the text has a scalar that is neither ASCII nor one of U+037E, U+1FEF and
    /// U+212A: its NFC form is then not ASCII, so it equals no ASCII text.
    private static func hasNonASCIIScalar(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let spellings: [[UInt8]] = [[0xCD, 0xBE], [0xE1, 0xBF, 0xAF], [0xE2, 0x84, 0xAA]]
        var i = 0
        while i < bytes.count {
            if bytes[i] < 0x80 { i += 1; continue }
            guard let spelling = spellings.first(where: { i + $0.count <= bytes.count && bytes[i..<i + $0.count].elementsEqual($0) }) else { return true }
            i += spelling.count
        }
        return false
    }

    private static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    private static func sameBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    }

    /// Byte order (which is scalar order) of two byte strings: -1, 0 or 1.
    private static func byteOrder(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int32 {
        let common = min(a.count, b.count)
        let c = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
        if c != 0 { return c < 0 ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        if sameBytes(a, b) { return true }
        if isSimple(a) && isSimple(b) { return false }
        if (isASCII(a) && hasNonASCIIScalar(b)) || (isASCII(b) && hasNonASCIIScalar(a)) { return false }
        return evaluate(PredicateExpressions.Equal(lhs: PredicateExpressions.Value(string(a)), rhs: PredicateExpressions.Value(string(b))))
    }

    static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>, _ op: Int32) -> Bool {
        let operators: [PredicateExpressions.ComparisonOperator] = [.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual]
        guard op >= 0 && op < 4 else { return false }
        if isSimple(a) && isSimple(b) {
            let order = byteOrder(a, b)
            switch op {
            case 0: return order < 0
            case 1: return order <= 0
            case 2: return order > 0
            default: return order >= 0
            }
        }
        return evaluate(PredicateExpressions.Comparison(lhs: PredicateExpressions.Value(string(a)), rhs: PredicateExpressions.Value(string(b)), op: operators[Int(op)]))
    }

    static func starts(_ s: UnsafeBufferPointer<UInt8>, with prefix: UnsafeBufferPointer<UInt8>) -> Bool {
        // A prefix ending in CR may end inside a CR LF Character of `s`.
        if isASCII(s) && isASCII(prefix) && prefix.last != 0x0D {
            return prefix.count <= s.count && sameBytes(UnsafeBufferPointer(rebasing: s[..<prefix.count]), prefix)
        }
        return evaluate(PredicateExpressions.SequenceStartsWith(base: PredicateExpressions.Value(string(s)), prefix: PredicateExpressions.Value(string(prefix))))
    }

    static func contains(_ s: UnsafeBufferPointer<UInt8>, _ part: UnsafeBufferPointer<UInt8>) -> Bool {
        // A part starting with LF or ending with CR may meet `s` inside a CR LF Character.
        if isASCII(s) && isASCII(part), let first = part.first, first != 0x0A, part.last != 0x0D {
            guard part.count <= s.count else { return false }
            let last = s.count - part.count
            var start = 0
            while start <= last {
                guard let hit = memchr(s.baseAddress! + start, Int32(first), last - start + 1) else { return false }
                let offset = s.baseAddress!.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                if memcmp(s.baseAddress! + offset, part.baseAddress!, part.count) == 0 { return true }
                start = offset + 1
            }
            return false
        }
        return evaluate(PredicateExpressions.CollectionContainsCollection(base: PredicateExpressions.Value(string(s)), other: PredicateExpressions.Value(string(part))))
    }

    /// The collation's order: the NFC forms' UTF-8 bytes (scalar order), as the standard
    /// library normalizes for `==`.
    static func order(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int32 {
        if isSimple(a) && isSimple(b) { return byteOrder(a, b) }
        let (x, y) = (string(a)._nfcCodeUnits, string(b)._nfcCodeUnits)
        return x.withUnsafeBufferPointer { x in y.withUnsafeBufferPointer { y in byteOrder(x, y) } }
    }

    private static func evaluate<E: PredicateExpression>(_ expression: E) -> Bool where E.Output == Bool {
        (try? expression.evaluate(PredicateBindings())) ?? false
    }
}
