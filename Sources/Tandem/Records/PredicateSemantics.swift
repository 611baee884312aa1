import Foundation
import Synchronization

/// How values of one Swift type compare in a translated predicate, so that SQL selects exactly
/// the records Swift selects from what `fetch` returns.
indirect enum PredicateSemantics: Sendable {
    /// Integers, `Bool` and `Double`: SQLite compares them as Swift does (`-0.0 == 0.0`; a NaN
    /// constant is handled apart, and no stored value is NaN).
    case number
    /// `String`: Swift's canonical equivalence and Characters, through ``SwiftStringFunctions``.
    case text
    /// `Date`: compared as the `Date` a fetch reads, seconds since 2001 (``DateSemantics``).
    case date
    /// `UUID`: text in any case, compared lower-cased (as `UUID(uuidString:)` reads it).
    case uuid
    /// An enum stored as its raw value, whose `==` (and `<`, for an order) agree with its raw
    /// values' on every case: compared as its raw values are.
    case raw(PredicateSemantics)
    /// Anything else (JSON text, `Data`, `URL`, `Decimal`, `Float`, an enum ordered otherwise):
    /// decoded and compared by Swift (``SwiftValueFunctions``).
    case swift(token: Int64)

    /// What a comparison needs of the type.
    enum Use { case equality, order }

    /// The semantics of `T` (optional or not) for `use`.
    static func of<T: Equatable>(_ type: T.Type, for use: Use) -> PredicateSemantics {
        let base = OptionalType.unwrapped(T.self)
        if let known = builtIn(base) { return known }
        if let raw = RawOrder.semantics(of: base, for: use) { return .raw(raw) }
        return .swift(token: SwiftValueFunctions.token(for: T.self) { ColumnComparison.valueType(T.self) })
    }

    /// The semantics of a type that needs no registration (nil for any other).
    static func builtIn(_ base: Any.Type) -> PredicateSemantics? {
        switch base {
        case is String.Type: return .text
        case is Bool.Type, is Int.Type, is Int64.Type, is Int32.Type, is Int16.Type, is Int8.Type,
            is UInt.Type, is UInt64.Type, is UInt32.Type, is UInt16.Type, is UInt8.Type, is Double.Type:
            return .number
        case is Date.Type: return .date
        case is UUID.Type: return .uuid
        default: return nil
        }
    }
}

/// Optional types and values seen through.
enum OptionalType {
    /// `Wrapped` of an optional type, else the type.
    static func unwrapped(_ type: Any.Type) -> Any.Type {
        (type as? any OptionalProtocol.Type).map { unwrapped($0.wrappedType) } ?? type
    }

    /// The wrapped value of a non-nil optional, else the value.
    static func unwrappedValue(_ value: Any) -> Any {
        (value as? any OptionalProtocol)?.wrappedValue.map(unwrappedValue) ?? value
    }
}

/// Whether an enum's `==` and `<` are its raw values' (on every case), checked once per type.
enum RawOrder {
    private struct Key: Hashable {
        let type: ObjectIdentifier
        let order: Bool
    }
    private static let cache = Mutex<[Key: PredicateSemantics?]>([:])

    /// The raw values' semantics when `base` compares as they do for `use`; nil when it is not
    /// a `CaseIterable` `RawRepresentable` type with raw values of numbers or text, or compares
    /// otherwise (an order of its own, such as declaration order).
    static func semantics(of base: Any.Type, for use: PredicateSemantics.Use) -> PredicateSemantics? {
        let key = Key(type: ObjectIdentifier(base), order: use == .order)
        if let known = cache.withLock({ $0[key] }) { return known }
        let found = compute(base, use)
        cache.withLock { $0[key] = .some(found) }
        return found
    }

    private static func compute(_ base: Any.Type, _ use: PredicateSemantics.Use) -> PredicateSemantics? {
        guard let iterable = base as? any CaseIterable.Type else { return nil }
        let cases = iterable.allCasesAsAny
        guard cases.count <= 256, let first = cases.first as? any RawRepresentable else { return nil }
        let raw: PredicateSemantics
        switch PredicateSemantics.builtIn(type(of: first.rawValue)) {
        case .number?: raw = .number
        case .text?: raw = .text
        default: return nil
        }
        return agrees(cases, use) ? raw : nil
    }

    /// True when, for every pair of cases, `==` (and `<` for an order) gives what it gives on
    /// their raw values.
    private static func agrees(_ cases: [Any], _ use: PredicateSemantics.Use) -> Bool {
        let raws = cases.compactMap { ($0 as? any RawRepresentable)?.rawValue }
        guard raws.count == cases.count else { return false }
        for i in cases.indices {
            for j in cases.indices {
                guard let same = Dynamic.equal(cases[i], cases[j]), same == Dynamic.equal(raws[i], raws[j]) else { return false }
                if use == .order {
                    guard let less = Dynamic.less(cases[i], cases[j]), less == Dynamic.less(raws[i], raws[j]) else { return false }
                }
            }
        }
        return true
    }
}

/// `==` and `<` on values known only as `Any`.
enum Dynamic {
    static func equal(_ a: Any, _ b: Any) -> Bool? {
        guard let a = a as? any Equatable else { return nil }
        return equal(a, b)
    }

    private static func equal<T: Equatable>(_ a: T, _ b: Any) -> Bool? {
        (b as? T).map { a == $0 }
    }

    static func less(_ a: Any, _ b: Any) -> Bool? {
        guard let a = a as? any Comparable else { return nil }
        return less(a, b)
    }

    private static func less<T: Comparable>(_ a: T, _ b: Any) -> Bool? {
        (b as? T).map { a < $0 }
    }
}

extension CaseIterable {
    /// Every case, as `Any` (callable on an existential metatype).
    static var allCasesAsAny: [Any] { allCases.map { $0 } }
}
