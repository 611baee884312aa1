import Foundation

/// Values of any Codable type compared by Swift inside SQL (``SwiftValueFunctions``): a column
/// value decodes as a fetch decodes it, and a constant is bound in its stored form when that
/// reads back as the constant itself.
enum ColumnComparison {
    /// `T` for ``SwiftValueFunctions``: decoded as a fetch decodes a column, compared with
    /// Swift's `==` and, for a `Comparable` type, `<`, `<=`, `>`, `>=`.
    static func valueType<T: Equatable>(_ type: T.Type) -> SwiftValueFunctions.ValueType {
        let operations = Operations(
            decode: { decode(T.self, from: $0) },
            compare: { a, b, op in
                guard let a = a as? T, let b = b as? T else { return false }
                if Int64(op) == SwiftValueFunctions.equalCode { return a == b }
                guard let comparable = a as? any Comparable else { return false }
                return order(comparable, b, op) ?? false
            })
        return SwiftValueFunctions.ValueType(decode: { operations.decode($0) }, compare: { operations.compare($0, $1, $2) })
    }

    /// A type's decoding and comparison, which capture only its metatype.
    /// `@unchecked Sendable`: a metatype is an immutable value, and the closures hold no other state.
    private struct Operations: @unchecked Sendable {
        let decode: (DatabaseValue) -> Any?
        let compare: (Any, Any, Int32) -> Bool
    }

    /// `a op b` with Swift's operators, as `PredicateExpressions.Comparison` applies them.
    private static func order<C: Comparable>(_ a: C, _ b: Any, _ op: Int32) -> Bool? {
        guard let b = b as? C else { return nil }
        switch op {
        case 0: return a < b
        case 1: return a <= b
        case 2: return a > b
        case 3: return a >= b
        default: return nil
        }
    }

    /// The value of `type` a fetch reads from `value` (nil for NULL in an optional type); nil
    /// when it does not decode.
    static func decode(_ type: Any.Type, from value: DatabaseValue) -> Any? {
        if value.isNull { return (type as? any ExpressibleByNilLiteral.Type)?.init(nilLiteral: ()) }
        guard let decodable = OptionalType.unwrapped(type) as? any Decodable.Type else { return nil }
        return try? ColumnValueDecoder.decode(decodable, from: value)
    }

    /// The value as its column stores it, when it reads back as itself (nil for a value that
    /// does not: no stored value could then be compared with it exactly in SQL).
    static func storedForm(of value: Any) -> DatabaseValue? {
        if let optional = value as? any OptionalProtocol, optional.isNone { return .null }
        let value = OptionalType.unwrappedValue(value)
        guard let encodable = value as? any Encodable, let stored = try? RecordValue.databaseValue(encodable),
            let back = decode(type(of: value), from: stored), Dynamic.equal(value, back) == true
        else { return nil }
        return stored
    }
}
