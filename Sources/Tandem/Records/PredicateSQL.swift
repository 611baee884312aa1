import Foundation

/// SQL text with its bound arguments; values never become SQL text.
struct SQLFragment {
    var text: String
    var arguments: [DatabaseValue] = []

    static func + (a: SQLFragment, b: SQLFragment) -> SQLFragment {
        SQLFragment(text: a.text + b.text, arguments: a.arguments + b.arguments)
    }
}

/// A `#Predicate` expression node that has an SQL form. Foundation's `PredicateExpressions`
/// types conform below; a node without a conformance (or whose parts do not translate) makes
/// the predicate "untranslatable": fetches then evaluate it in Swift, and count, ids and
/// delete-where throw naming the node.
protocol SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment
}

/// What a translation needs: the record type's layout, for key paths, and the variables bound
/// to related records inside relationship subqueries.
struct PredicateContext {
    /// A predicate variable as a table in the SQL: the record type and its alias.
    struct Binding {
        let layout: RecordLayout
        let alias: String
        /// A related record (inside a subquery), whose own relationships are not followed.
        let isRelated: Bool
    }

    let layout: RecordLayout
    private var bindings: [PredicateExpressions.VariableID: Binding]

    /// The context of `predicate`, whose variable is the query's own record.
    init<R>(layout: RecordLayout, predicate: Predicate<R>) {
        self.layout = layout
        let root: PredicateExpressions.Variable<R> = predicate.variable
        bindings = [root.key: Binding(layout: layout, alias: SQLText.identifier(layout.tableName), isRelated: false)]
    }

    /// The table a variable stands for, if it stands for one (the predicate's record, or a
    /// related record in a subquery).
    func binding(for variable: PredicateExpressions.VariableID) -> Binding? { bindings[variable] }

    /// This context with `variable` standing for a related record of type `target`.
    func binding(_ variable: PredicateExpressions.VariableID, toRelated target: RecordLayout) -> PredicateContext {
        var inner = self
        inner.bindings[variable] = Binding(layout: target, alias: InternalTables.relatedAlias(bindings.count), isRelated: true)
        return inner
    }

    /// `(lhs op rhs)`.
    func infix(_ lhs: Any, _ op: String, _ rhs: Any) throws -> SQLFragment {
        try SQLFragment(text: "(") + translate(lhs) + SQLFragment(text: " \(op) ") + translate(rhs) + SQLFragment(text: ")")
    }

    /// The SQL of a child node, or an error naming it.
    func translate(_ node: Any) throws -> SQLFragment {
        guard let node = node as? any SQLPredicateExpression else { throw Untranslatable(node: node) }
        return try node.sql(self)
    }

    /// The error for a relationship of a related record (see ``RelationshipDepth``).
    func followedTooDeep(_ binding: Binding, _ relation: RecordLayout.Relation) -> TandemError {
        .invalidRecord("\(layout.typeName): the predicate follows \(binding.layout.typeName).\(relation.property), a relationship of a related record; relationships are followed one level deep")
    }

    /// `(SELECT value FROM target AS rN WHERE rN.id = outer.{relation}_id)`: a value of the
    /// related record, NULL when there is none (as `?.` gives nil). `variable`, when given, is
    /// bound to the related record while `value` is translated.
    func subquery(_ relation: RecordLayout.Relation, from outer: Binding, binding variable: PredicateExpressions.VariableID?,
                  value: (PredicateContext, _ alias: String) throws -> SQLFragment) throws -> SQLFragment {
        if outer.isRelated { throw followedTooDeep(outer, relation) }
        let target = try RecordLayout.of(relation.target)
        let alias = InternalTables.relatedAlias(bindings.count)
        let inner = variable.map { binding($0, toRelated: target) } ?? self
        let selected = try value(inner, alias)
        return SQLFragment(text: "(SELECT ") + selected
            + SQLFragment(text: " FROM \(SQLText.identifier(target.tableName)) AS \(alias) WHERE \(alias).\"id\" = \(outer.alias).\(SQLText.identifier(relation.column)))")
    }
}

/// A predicate node with no SQL form, named as the predicate spells it (`$0.title.count`), or
/// by its type where it has no such spelling.
struct Untranslatable: Error, CustomStringConvertible {
    /// The node as written (`$0.title.count`), or its type name.
    let name: String
    init(node: Any) { name = (node as? any SpelledPredicateExpression)?.spelling ?? String(describing: type(of: node)).prefix(while: { $0 != "<" }).description }
    var description: String {
        "the predicate expression \(name) cannot be translated to SQL"
    }
}

/// A predicate node that can be spelled as in the `#Predicate` closure, for error messages.
protocol SpelledPredicateExpression {
    var spelling: String { get }
}

extension PredicateExpressions.Variable: SpelledPredicateExpression {
    var spelling: String { "$0" }
}

extension PredicateExpressions.KeyPath: SpelledPredicateExpression {
    /// `$0.title.count`: the root's spelling, then the key path's properties. A computed
    /// property of the standard library reflects no name: it is spelled by its type
    /// (`$0.title.<a computed Int>`).
    var spelling: String {
        let path = String(reflecting: keyPath)
        var properties = String(path.drop(while: { $0 != "." }))
        if properties.isEmpty || properties.contains("<computed") {
            properties = ".<a computed \(String(describing: type(of: keyPath).valueType))>"
        }
        return ((root as? any SpelledPredicateExpression)?.spelling ?? "…") + properties
    }
}

extension PredicateExpressions.Value: SpelledPredicateExpression {
    var spelling: String { String(reflecting: value) }
}

extension PredicateExpressions.KeyPath: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        guard let variable = root as? PredicateExpressions.Variable<Root.Output>, let binding = context.binding(for: variable.key) else {
            throw Untranslatable(node: self)
        }
        if let relation = binding.layout.relation(for: keyPath) {
            // `$0.folder` itself: the related record's id, NULL when there is none.
            return try context.subquery(relation, from: binding, binding: nil) { _, alias in SQLFragment(text: alias + ".\"id\"") }
        }
        do {
            return binding.layout.readExpression(of: try binding.layout.column(for: keyPath), qualifiedBy: binding.alias)
        } catch let error as TandemError {
            // A key path through another value (`$0.meta.tags`) is evaluated in Swift.
            if String(reflecting: keyPath).dropFirst(binding.layout.typeName.count + 2).contains(".") { throw Untranslatable(node: self) }
            throw error
        }
    }
}

extension PredicateExpressions.Value: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        // A record compares as a whole value, which only Swift can do.
        guard let encodable = value as? any Encodable, !(value is any Record) else { throw Untranslatable(node: self) }
        if let optional = value as? any OptionalProtocol, optional.isNone { return SQLFragment(text: "NULL") }
        return SQLFragment(text: "?", arguments: [try RecordValue.databaseValue(encodable)])
    }
}

extension PredicateExpressions.NilLiteral: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment { SQLFragment(text: "NULL") }
}

/// `==` and `!=` are NULL-safe, as Swift's optional comparison is (`nil == nil`).
extension PredicateExpressions.Equal: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        try context.infix(lhs, "IS", rhs)
    }
}

extension PredicateExpressions.NotEqual: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        try context.infix(lhs, "IS NOT", rhs)
    }
}

extension PredicateExpressions.Comparison: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        let op: String
        switch self.op {
        case .lessThan: op = "<"
        case .lessThanOrEqual: op = "<="
        case .greaterThan: op = ">"
        case .greaterThanOrEqual: op = ">="
        @unknown default: throw Untranslatable(node: self)
        }
        return try SQLFragment(text: "coalesce(") + context.translate(lhs) + SQLFragment(text: " \(op) ") + context.translate(rhs) + SQLFragment(text: ", 0)")
    }
}

extension PredicateExpressions.Conjunction: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        try context.infix(lhs, "AND", rhs)
    }
}

extension PredicateExpressions.Disjunction: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        try context.infix(lhs, "OR", rhs)
    }
}

extension PredicateExpressions.Negation: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        try SQLFragment(text: "(NOT ") + context.translate(wrapped) + SQLFragment(text: ")")
    }
}

extension PredicateExpressions.NilCoalesce: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        try SQLFragment(text: "coalesce(") + context.translate(lhs) + SQLFragment(text: ", ") + context.translate(rhs) + SQLFragment(text: ")")
    }
}

/// `starts(with:)` compares characters exactly (case-sensitive), as Swift does.
extension PredicateExpressions.SequenceStartsWith: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        let prefix = try context.translate(self.prefix)
        return try SQLFragment(text: "(substr(") + context.translate(base) + SQLFragment(text: ", 1, length(") + prefix
            + SQLFragment(text: ")) = ") + prefix + SQLFragment(text: ")")
    }
}

/// `contains` on strings is case-sensitive (`instr`); an empty needle is contained, as in Swift.
extension PredicateExpressions.CollectionContainsCollection: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        try SQLFragment(text: "(instr(") + context.translate(base) + SQLFragment(text: ", ") + context.translate(other) + SQLFragment(text: ") > 0)")
    }
}

/// `[a, b].contains($0.x)` over a constant collection: `x IN (a, b)`.
extension PredicateExpressions.SequenceContains: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        guard let constant = sequence as? any ConstantSequence else { throw Untranslatable(node: self) }
        let values = try constant.databaseValues()
        if values.isEmpty { return SQLFragment(text: "0") }
        let element = try context.translate(self.element)
        let list = SQLFragment(text: " IN (" + Array(repeating: "?", count: values.count).joined(separator: ", ") + "))", arguments: values)
        // Swift's contains matches nil to nil; SQL's IN never matches NULL.
        let matchesNil = values.contains(where: \.isNull) ? element + SQLFragment(text: " IS NULL OR ") : SQLFragment(text: "")
        return SQLFragment(text: "(") + matchesNil + element + list
    }
}

/// `(a...b).contains($0.x)` and `(a..<b).contains($0.x)`.
extension PredicateExpressions.RangeExpressionContains: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        guard let bounds = range as? any RangeBounds else { throw Untranslatable(node: self) }
        let element = try context.translate(self.element)
        let (lower, upper) = try bounds.bounds(context)
        return SQLFragment(text: "(") + element + SQLFragment(text: " >= ") + lower + SQLFragment(text: " AND ") + element
            + SQLFragment(text: bounds.isClosed ? " <= " : " < ") + upper + SQLFragment(text: ")")
    }
}

protocol RangeBounds {
    var isClosed: Bool { get }
    func bounds(_ context: PredicateContext) throws -> (SQLFragment, SQLFragment)
}

extension PredicateExpressions.ClosedRange: RangeBounds {
    var isClosed: Bool { true }
    func bounds(_ context: PredicateContext) throws -> (SQLFragment, SQLFragment) {
        (try context.translate(lower), try context.translate(upper))
    }
}

extension PredicateExpressions.Range: RangeBounds {
    var isClosed: Bool { false }
    func bounds(_ context: PredicateContext) throws -> (SQLFragment, SQLFragment) {
        (try context.translate(lower), try context.translate(upper))
    }
}

/// A constant collection in a predicate (`Value<[T]>`), as bound values.
protocol ConstantSequence {
    func databaseValues() throws -> [DatabaseValue]
}

extension PredicateExpressions.Value: ConstantSequence where Output: Sequence {
    func databaseValues() throws -> [DatabaseValue] {
        try value.map { element in
            if let optional = element as? any OptionalProtocol, optional.isNone { return .null }
            guard let encodable = element as? any Encodable else { throw Untranslatable(node: self) }
            return try RecordValue.databaseValue(encodable)
        }
    }
}

/// Lets code see through `Optional` without knowing its wrapped type: whether a value is nil,
/// and which type an optional type wraps.
protocol OptionalProtocol {
    var isNone: Bool { get }
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalProtocol {
    var isNone: Bool { self == nil }
    static var wrappedType: Any.Type { Wrapped.self }
}
