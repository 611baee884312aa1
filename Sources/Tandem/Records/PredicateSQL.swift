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

    /// The SQL of a child node, or an error naming it. A part that refers to no record
    /// (`-1`, `-0.0`) is evaluated in Swift and bound (``constant(_:)``).
    func translate(_ node: Any) throws -> SQLFragment {
        if !(node is any ConstantNode), let constant = constant(node) { return try bind(constant, node: node) }
        guard let node = node as? any SQLPredicateExpression else { throw Untranslatable(node: node) }
        return try node.sql(self)
    }

    /// The error for a relationship of a related record (see ``RelationshipDepth``).
    func followedTooDeep(_ binding: Binding, _ relation: RecordLayout.Relation) -> TandemError {
        .invalidRecord(
            "\(layout.typeName): the predicate follows \(binding.layout.typeName).\(relation.property), a relationship of a related record; relationships are followed one level deep"
        )
    }

    /// `(SELECT value FROM target AS rN WHERE rN.id = outer.{relation}_id)`: a value of the
    /// related record, NULL when there is none (as `?.` gives nil). `variable`, when given, is
    /// bound to the related record while `value` is translated.
    func subquery(
        _ relation: RecordLayout.Relation, from outer: Binding, binding variable: PredicateExpressions.VariableID?,
        value: (PredicateContext, _ alias: String) throws -> SQLFragment
    ) throws -> SQLFragment {
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
            let column = binding.layout.readExpression(of: try binding.layout.column(for: keyPath), qualifiedBy: binding.alias)
            return OptionalType.unwrapped(Output.self) == Date.self ? DateSemantics.asRead(column) : column
        } catch let error as TandemError {
            // A key path through another value (`$0.meta.tags`) is evaluated in Swift.
            if String(reflecting: keyPath).dropFirst(binding.layout.typeName.count + 2).contains(".") { throw Untranslatable(node: self) }
            throw error
        }
    }
}

extension PredicateExpressions.Value: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        try context.bind(PredicateConstantValue(value: value), node: self)
    }
}

extension PredicateExpressions.NilLiteral: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment { SQLFragment(text: "NULL") }
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

/// Lets code see through `Optional` without knowing its wrapped type: whether a value is nil,
/// and which type an optional type wraps.
protocol OptionalProtocol {
    var isNone: Bool { get }
    /// The wrapped value, nil for nil.
    var wrappedValue: Any? { get }
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalProtocol {
    var isNone: Bool { self == nil }
    var wrappedValue: Any? { self.map { $0 } }
    static var wrappedType: Any.Type { Wrapped.self }
}
