import Foundation

/// A key path node that may name a to-one relationship of the variable it starts at.
protocol RelationshipKeyPath {
    func relation(_ context: PredicateContext) -> (PredicateContext.Binding, RecordLayout.Relation)?
}

extension PredicateExpressions.KeyPath: RelationshipKeyPath {
    func relation(_ context: PredicateContext) -> (PredicateContext.Binding, RecordLayout.Relation)? {
        guard let variable = root as? PredicateExpressions.Variable<Root.Output>, let binding = context.binding(for: variable.key) else { return nil }
        return binding.layout.relation(for: keyPath).map { (binding, $0) }
    }
}

/// `$0.folder?.name`: a value of the related record, through a subquery (NULL when the
/// relationship is nil or its record is not stored, as `?.` gives nil in Swift). Other optional
/// chains are evaluated in Swift.
extension PredicateExpressions.OptionalFlatMap: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        guard let path = wrapped as? any RelationshipKeyPath, let (outer, relation) = path.relation(context) else {
            throw Untranslatable(node: self)
        }
        return try context.subquery(relation, from: outer, binding: variable.key) { inner, _ in try inner.translate(transform) }
    }
}

/// An optional chain whose parts a walk over the predicate can see.
protocol OptionalChainNode {
    var wrappedNode: Any { get }
    var transformNode: Any { get }
    var variableKey: PredicateExpressions.VariableID { get }
}

extension PredicateExpressions.OptionalFlatMap: OptionalChainNode {
    var wrappedNode: Any { wrapped }
    var transformNode: Any { transform }
    var variableKey: PredicateExpressions.VariableID { variable.key }
}

/// Relationships are followed one level deep: a fetch loads related records without their own
/// relationships. A predicate that follows a relationship of a related record
/// (`$0.folder?.parent?.name`) would be wrong wherever it is evaluated in Swift, so it is refused
/// wherever it appears, translated or not.
enum RelationshipDepth {
    /// - Throws: ``TandemError/invalidRecord(_:)`` naming the relationship followed too deep.
    static func check(_ node: Any, _ context: PredicateContext) throws {
        if node is any ConstantNode { return }  // a walk does not look inside a constant
        if let path = node as? any RelationshipKeyPath, let (binding, relation) = path.relation(context), binding.isRelated {
            throw context.followedTooDeep(binding, relation)
        }
        if let chain = node as? any OptionalChainNode, let path = chain.wrappedNode as? any RelationshipKeyPath,
            let (outer, relation) = path.relation(context)
        {
            if outer.isRelated { throw context.followedTooDeep(outer, relation) }
            try check(chain.transformNode, context.binding(chain.variableKey, toRelated: try RecordLayout.of(relation.target)))
            return
        }
        for child in Mirror(reflecting: node).children { try check(child.value, context) }
    }

    /// A sort key path (`\Note.folder?.parent?.name`) is checked the same way.
    static func check(sortKeyPath keyPath: AnyKeyPath, layout: RecordLayout) throws {
        guard let path = try? layout.property(of: keyPath) else { return }
        let properties = path.replacingOccurrences(of: "?", with: "").split(separator: ".").map(String.init)
        guard properties.count > 2, let first = layout.relation(named: properties[0]) else { return }
        let target = try RecordLayout.of(first.target)
        if let second = target.relation(named: properties[1]) {
            throw TandemError.invalidRecord(
                "\(layout.typeName): the sort follows \(target.typeName).\(second.property), a relationship of a related record; relationships are followed one level deep")
        }
    }
}
