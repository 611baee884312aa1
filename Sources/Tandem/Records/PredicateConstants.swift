import Foundation

/// A part of a predicate that refers to no record: a captured value, a literal, or an
/// expression of them (`-1`, `-0.0`, `(-5...5)`), which Swift evaluates once, as it would for
/// every record.
struct PredicateConstantValue {
    let value: Any

    /// True for a floating-point NaN (optional or not), which equals nothing and orders nowhere.
    var isNaN: Bool {
        switch OptionalType.unwrappedValue(value) {
        case let d as Double: return d.isNaN
        case let f as Float: return f.isNaN
        case let d as Date: return d.timeIntervalSinceReferenceDate.isNaN
        default: return false
        }
    }

    var isNil: Bool { (value as? any OptionalProtocol)?.isNone ?? false }

    /// The value as SQL binds it for a comparison with what a fetch reads: text as it is, a
    /// `Date` as its seconds since 2001 (``DateSemantics``), a UUID lower-cased, an enum as its
    /// raw value, any other value in its stored form. Nil for a value no stored value can be
    /// compared with exactly: a NaN, a record, or a value that does not read back as itself
    /// from its column.
    var argument: DatabaseValue? {
        if isNil { return .null }
        let value = OptionalType.unwrappedValue(value)
        switch value {
        case is any Record: return nil
        case let d as Double: return d.isNaN ? nil : .real(d)
        case let d as Date: return d.timeIntervalSinceReferenceDate.isNaN ? nil : .real(d.timeIntervalSinceReferenceDate)
        case let s as String: return .text(s)
        case let u as UUID: return u.databaseValue
        case let b as Bool: return .integer(b ? 1 : 0)
        case let raw as any RawRepresentable where PredicateSemantics.builtIn(type(of: raw.rawValue)) != nil:
            return PredicateConstantValue(value: raw.rawValue).argument
        default:
            if PredicateSemantics.builtIn(type(of: value)) != nil, let encodable = value as? any Encodable {
                return try? RecordValue.databaseValue(encodable)
            }
            return ColumnComparison.storedForm(of: value)
        }
    }
}

/// A variable in a predicate: a part holding one refers to a record.
protocol PredicateVariableNode {}
extension PredicateExpressions.Variable: PredicateVariableNode {}

extension PredicateContext {
    /// The node's value when it refers to no record, evaluated in Swift; nil otherwise, or when
    /// its evaluation throws (Swift then throws for every record too: the predicate is left to it).
    func constant(_ node: Any) -> PredicateConstantValue? {
        if let value = node as? any ConstantNode { return PredicateConstantValue(value: value.constantValue) }
        guard let expression = node as? any PredicateExpression, !Self.refersToRecord(node),
            let value = try? Self.evaluate(expression)
        else { return nil }
        return PredicateConstantValue(value: value)
    }

    private static func evaluate<E: PredicateExpression>(_ expression: E) throws -> Any {
        try expression.evaluate(PredicateBindings())
    }

    /// True when a variable appears anywhere in the node.
    private static func refersToRecord(_ node: Any) -> Bool {
        if node is any PredicateVariableNode { return true }
        if node is any ConstantNode { return false }
        return Mirror(reflecting: node).children.contains { refersToRecord($0.value) }
    }

    /// A constant bound as ``PredicateConstantValue/argument``.
    /// - Throws: ``Untranslatable`` naming `node` for a value with no exact SQL form.
    func bind(_ constant: PredicateConstantValue, node: Any) throws -> SQLFragment {
        guard let argument = constant.argument else { throw Untranslatable(node: node) }
        return argument.isNull ? SQLFragment(text: "NULL") : SQLFragment(text: "?", arguments: [argument])
    }
}

/// A `Value` node: a constant as written in the predicate.
protocol ConstantNode {
    var constantValue: Any { get }
}

extension PredicateExpressions.Value: ConstantNode {
    var constantValue: Any { value }
}
