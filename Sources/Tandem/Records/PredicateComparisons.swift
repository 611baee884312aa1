import Foundation

/// `==`, `!=`, `<`, `<=`, `>`, `>=`, `contains` over a constant collection and ranges, each
/// as Swift evaluates it on what a fetch reads (``PredicateSemantics``), and two-valued: 1 or 0,
/// never NULL, so `!` and `== false` keep Swift's meaning (`![3, nil].contains($0.opt)` holds
/// for `opt == 2`).
extension PredicateExpressions.Equal: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        try context.equality(context.operand(lhs), context.operand(rhs), LHS.Output.self)
    }
}

extension PredicateExpressions.NotEqual: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        SQLFragment(text: "(NOT ") + (try context.equality(context.operand(lhs), context.operand(rhs), LHS.Output.self)) + SQLFragment(text: ")")
    }
}

extension PredicateExpressions.Comparison: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        try context.comparison(context.operand(lhs), op, context.operand(rhs), LHS.Output.self, node: self)
    }
}

/// `[a, b].contains($0.x)` over a constant collection.
extension PredicateExpressions.SequenceContains: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        guard let values = context.constant(sequence).flatMap({ Constants.elements(of: $0.value) }) else { throw Untranslatable(node: self) }
        return try context.membership(context.operand(element), in: values.map(PredicateConstantValue.init), RHS.Output.self, node: self)
    }
}

/// `(a...b).contains($0.x)` and `(a..<b).contains($0.x)`: `a <= x && x <= b` (`x < b`), as
/// the ranges' own `contains` is.
extension PredicateExpressions.RangeExpressionContains: SQLPredicateExpression {
    func sql(_ context: PredicateContext) throws -> SQLFragment {
        let (lower, upper, isClosed): (PredicateContext.Operand, PredicateContext.Operand, Bool)
        if let bounds = range as? any RangeBounds {
            (lower, upper, isClosed) = (try context.operand(bounds.lowerNode), try context.operand(bounds.upperNode), bounds.isClosed)
        } else if let constant = context.constant(range), let value = constant.value as? any RangeValue {
            (lower, upper, isClosed) = (try context.operand(constant: value.lowerValue), try context.operand(constant: value.upperValue), value.isClosed)
        } else {
            throw Untranslatable(node: self)
        }
        let x = try context.operand(element)
        let below = try context.comparison(lower, .lessThanOrEqual, x, Element.Output.self, node: self)
        let above = try context.comparison(x, isClosed ? .lessThanOrEqual : .lessThan, upper, Element.Output.self, node: self)
        return SQLFragment(text: "(") + below + SQLFragment(text: " AND ") + above + SQLFragment(text: ")")
    }
}

/// A range written in the predicate (`a...b`, `a..<b`), whose bounds are nodes.
protocol RangeBounds {
    var isClosed: Bool { get }
    var lowerNode: Any { get }
    var upperNode: Any { get }
}

extension PredicateExpressions.ClosedRange: RangeBounds {
    var isClosed: Bool { true }
    var lowerNode: Any { lower }
    var upperNode: Any { upper }
}

extension PredicateExpressions.Range: RangeBounds {
    var isClosed: Bool { false }
    var lowerNode: Any { lower }
    var upperNode: Any { upper }
}

/// A range value captured whole (`let r = 1...5; #Predicate { r.contains($0.count) }`).
protocol RangeValue {
    var isClosed: Bool { get }
    var lowerValue: Any { get }
    var upperValue: Any { get }
}

extension ClosedRange: RangeValue {
    var isClosed: Bool { true }
    var lowerValue: Any { lowerBound }
    var upperValue: Any { upperBound }
}

extension Range: RangeValue {
    var isClosed: Bool { false }
    var lowerValue: Any { lowerBound }
    var upperValue: Any { upperBound }
}

enum Constants {
    /// The elements of a constant collection, nil for another value.
    static func elements(of value: Any) -> [Any]? {
        guard let sequence = value as? any Sequence else { return nil }
        return elements(sequence)
    }

    private static func elements<S: Sequence>(_ sequence: S) -> [Any] { sequence.map { $0 } }
}

extension PredicateContext {
    /// One side of a comparison: its SQL (in the terms of ``PredicateSemantics``), and what is
    /// known of it: its constant value, or the stored column a key path reads.
    struct Operand {
        var sql: SQLFragment
        var constant: PredicateConstantValue?
        /// The column as stored (a `Date` key path's SQL converts it), for comparisons an index serves.
        var column: SQLFragment?
        /// True when the SQL is NULL only where the operand is nil (a column or a bound value),
        /// so that `x IS NOT NULL` can stand beside a condition instead of `coalesce`.
        var isPlain: Bool { constant != nil || column != nil }
        /// A constant with no exact SQL form (a NaN), named by the node, for the error when the
        /// comparison cannot decide without it.
        var unbound: Untranslatable?
    }

    func operand(_ node: Any) throws -> Operand {
        if let constant = constant(node) {
            guard let sql = try? bind(constant, node: node) else {
                return Operand(sql: SQLFragment(text: "NULL"), constant: constant, unbound: Untranslatable(node: node))
            }
            return Operand(sql: sql, constant: constant)
        }
        return Operand(sql: try translate(node), column: (node as? any ColumnKeyPath)?.storedColumn(self))
    }

    func operand(constant value: Any) throws -> Operand {
        try operand(PredicateExpressions.Value(PredicateConstantValue(value: value).value))
    }

    /// `a == b` as Swift evaluates it, for values of type `T`.
    func equality<T: Equatable>(_ a: Operand, _ b: Operand, _ type: T.Type) throws -> SQLFragment {
        if let x = a.constant, let y = b.constant { return .boolean((x.value as? T) == (y.value as? T)) }
        if a.constant?.isNaN == true || b.constant?.isNaN == true { return .boolean(false) }
        if let unbound = a.unbound ?? b.unbound { throw unbound }
        // Variable side first.
        let (x, y) = a.constant != nil ? (b, a) : (a, b)
        if y.constant?.isNil == true { return (x.column ?? x.sql) + SQLFragment(text: " IS NULL") }
        return equality(x, y, PredicateSemantics.of(T.self, for: .equality))
    }

    private func equality(_ x: Operand, _ y: Operand, _ semantics: PredicateSemantics) -> SQLFragment {
        switch semantics {
        case .number:
            return SQLFragment(text: "(") + x.sql + SQLFragment(text: " IS ") + y.sql + SQLFragment(text: ")")
        case .text:
            if case .text(let text)? = y.constant?.argument, TextEquality.hasNoOtherSpelling(text) {
                return SQLFragment(text: "(") + x.sql + SQLFragment(text: " IS ") + y.sql + SQLFragment(text: ")")
            }
            return function(SwiftStringFunctions.equal, x.sql, y.sql)
        case .date:
            if let column = x.column, case .real(let t)? = y.constant?.argument { return DateRange(column: column, readAs: t).sql(nil) }
            return SQLFragment(text: "(") + x.sql + SQLFragment(text: " IS ") + y.sql + SQLFragment(text: ")")
        case .uuid:
            return SQLFragment(text: "(lower(") + x.sql + SQLFragment(text: ") IS lower(") + y.sql + SQLFragment(text: "))")
        case .raw(let raw):
            return equality(x, y, raw)
        case .swift(let token):
            return function(
                SwiftValueFunctions.compare, x.sql, y.sql, SQLFragment(text: "?", arguments: [.integer(token)]),
                SQLFragment(text: "\(SwiftValueFunctions.equalCode)"))
        }
    }

    /// `a op b` as Swift evaluates it, for values of type `T`.
    func comparison<T: Comparable>(_ a: Operand, _ op: PredicateExpressions.ComparisonOperator, _ b: Operand, _ type: T.Type, node: Any) throws -> SQLFragment {
        guard let code = SwiftStringFunctions.code(op) else { throw Untranslatable(node: node) }
        if let x = a.constant, let y = b.constant {
            guard let x = x.value as? T, let y = y.value as? T else { throw Untranslatable(node: node) }
            return .boolean(PredicateComparison.evaluate(x, op, y))
        }
        if a.constant?.isNaN == true || b.constant?.isNaN == true { return .boolean(false) }
        if let unbound = a.unbound ?? b.unbound { throw unbound }
        return comparison(a, op, code, b, PredicateSemantics.of(T.self, for: .order))
    }

    private func comparison(_ a: Operand, _ op: PredicateExpressions.ComparisonOperator, _ code: Int64, _ b: Operand, _ semantics: PredicateSemantics) -> SQLFragment {
        let opCode = SQLFragment(text: "\(code)")
        switch semantics {
        case .number:
            return twoValued(a.sql + SQLFragment(text: " \(PredicateComparison.sql(op)) ") + b.sql, a, b)
        case .text:
            return function(SwiftStringFunctions.compare, a.sql, b.sql, opCode)
        case .date:
            if let column = a.column, case .real(let t)? = b.constant?.argument { return DateRange(column: column, readAs: t).sql(op) }
            if let column = b.column, case .real(let t)? = a.constant?.argument { return DateRange(column: column, readAs: t).sql(PredicateComparison.flipped(op)) }
            return twoValued(a.sql + SQLFragment(text: " \(PredicateComparison.sql(op)) ") + b.sql, a, b)
        case .uuid:
            return twoValued(SQLFragment(text: "lower(") + a.sql + SQLFragment(text: ") \(PredicateComparison.sql(op)) lower(") + b.sql + SQLFragment(text: ")"), a, b)
        case .raw(let raw):
            return comparison(a, op, code, b, raw)
        case .swift(let token):
            return function(SwiftValueFunctions.compare, a.sql, b.sql, SQLFragment(text: "?", arguments: [.integer(token)]), opCode)
        }
    }

    /// `x` is one of `values`, as `contains` on the collection evaluates it for type `T`.
    func membership<T: Equatable>(_ x: Operand, in values: [PredicateConstantValue], _ type: T.Type, node: Any) throws -> SQLFragment {
        if let constant = x.constant {
            return .boolean(values.contains { ($0.value as? T) == (constant.value as? T) })
        }
        if let unbound = x.unbound { throw unbound }
        var terms: [SQLFragment] = []
        if values.contains(where: \.isNil) { terms.append((x.column ?? x.sql) + SQLFragment(text: " IS NULL")) }
        // NaN equals nothing.
        let candidates = values.filter { !$0.isNil && !$0.isNaN }
        var arguments: [DatabaseValue] = []
        for value in candidates {
            guard let argument = value.argument else { throw Untranslatable(node: node) }
            arguments.append(argument)
        }
        terms += membership(x, arguments, PredicateSemantics.of(T.self, for: .equality))
        guard !terms.isEmpty else { return .boolean(false) }
        return SQLFragment(text: "(") + terms.dropFirst().reduce(terms[0]) { $0 + SQLFragment(text: " OR ") + $1 } + SQLFragment(text: ")")
    }

    private func membership(_ x: Operand, _ arguments: [DatabaseValue], _ semantics: PredicateSemantics) -> [SQLFragment] {
        guard !arguments.isEmpty else { return [] }
        let each = { (argument: DatabaseValue) in Operand(sql: SQLFragment(text: "?", arguments: [argument]), constant: nil, column: nil) }
        switch semantics {
        case .number, .date:
            return [inList(x.sql, arguments)]
        case .uuid:
            return [inList(SQLFragment(text: "lower(") + x.sql + SQLFragment(text: ")"), arguments)]
        case .text:
            let plain = arguments.filter { if case .text(let t) = $0 { return TextEquality.hasNoOtherSpelling(t) } else { return false } }
            let others = arguments.filter { !plain.contains($0) }
            return (plain.isEmpty ? [] : [inList(x.sql, plain)]) + others.map { function(SwiftStringFunctions.equal, x.sql, each($0).sql) }
        case .raw(let raw):
            return membership(x, arguments, raw)
        case .swift:
            return arguments.map { equality(x, each($0), semantics) }
        }
    }

    /// `(x IN (…) AND x IS NOT NULL)`: two-valued, and an index on `x` still serves it.
    private func inList(_ x: SQLFragment, _ arguments: [DatabaseValue]) -> SQLFragment {
        SQLFragment(text: "(") + x + SQLFragment(text: " IN (" + Array(repeating: "?", count: arguments.count).joined(separator: ", ") + ") AND ", arguments: arguments)
            + x + SQLFragment(text: " IS NOT NULL)")
    }

    /// A condition that is NULL where an operand is: 0 there instead.
    private func twoValued(_ condition: SQLFragment, _ a: Operand, _ b: Operand) -> SQLFragment {
        guard a.isPlain && b.isPlain else { return SQLFragment(text: "coalesce(") + condition + SQLFragment(text: ", 0)") }
        var guarded = SQLFragment(text: "(") + condition
        for operand in [a, b] where operand.constant == nil { guarded = guarded + SQLFragment(text: " AND ") + operand.sql + SQLFragment(text: " IS NOT NULL") }
        return guarded + SQLFragment(text: ")")
    }

    func function(_ name: String, _ arguments: SQLFragment...) -> SQLFragment {
        SQLFragment(text: name + "(") + arguments.dropFirst().reduce(arguments[0]) { $0 + SQLFragment(text: ", ") + $1 } + SQLFragment(text: ")")
    }
}

/// The comparison operators.
enum PredicateComparison {
    static func sql(_ op: PredicateExpressions.ComparisonOperator) -> String {
        switch op {
        case .lessThan: return "<"
        case .lessThanOrEqual: return "<="
        case .greaterThan: return ">"
        default: return ">="
        }
    }

    /// The operator with its operands swapped (`a < b` is `b > a`).
    static func flipped(_ op: PredicateExpressions.ComparisonOperator) -> PredicateExpressions.ComparisonOperator {
        switch op {
        case .lessThan: return .greaterThan
        case .lessThanOrEqual: return .greaterThanOrEqual
        case .greaterThan: return .lessThan
        default: return .lessThanOrEqual
        }
    }

    /// `a op b` as `PredicateExpressions.Comparison` evaluates it.
    static func evaluate<T: Comparable>(_ a: T, _ op: PredicateExpressions.ComparisonOperator, _ b: T) -> Bool {
        (try? PredicateExpressions.Comparison(lhs: PredicateExpressions.Value(a), rhs: PredicateExpressions.Value(b), op: op).evaluate(PredicateBindings())) ?? false
    }
}

/// A comparison of a `Date` column with a constant, as the stored values that read as less,
/// equal or greater (``DateSemantics/storedValues(readingAs:)``), which an index serves.
struct DateRange {
    let column: SQLFragment
    let lowest: Double?
    let highest: Double?

    init(column: SQLFragment, readAs t: Double) {
        self.column = column
        (lowest, highest) = DateSemantics.storedValues(readingAs: t)
    }

    /// The column reads as `op` the constant; nil is `==`.
    func sql(_ op: PredicateExpressions.ComparisonOperator?) -> SQLFragment {
        let notNull = column + SQLFragment(text: " IS NOT NULL")
        func bounded(_ sign: String, _ bound: Double) -> SQLFragment {
            SQLFragment(text: "(") + column + SQLFragment(text: " \(sign) ?", arguments: [.real(bound)]) + SQLFragment(text: " AND ") + notNull + SQLFragment(text: ")")
        }
        switch op {
        case nil:
            guard let lowest, let highest, lowest <= highest else { return .boolean(false) }
            return SQLFragment(text: "(") + column + SQLFragment(text: " BETWEEN ? AND ?", arguments: [.real(lowest), .real(highest)])
                + SQLFragment(text: " AND ") + notNull + SQLFragment(text: ")")
        case .lessThan?: return lowest.map { bounded("<", $0) } ?? notNull
        case .lessThanOrEqual?: return highest.map { bounded("<=", $0) } ?? .boolean(false)
        case .greaterThan?: return highest.map { bounded(">", $0) } ?? notNull
        default: return lowest.map { bounded(">=", $0) } ?? .boolean(false)
        }
    }
}

extension SQLFragment {
    /// A constant truth value.
    static func boolean(_ value: Bool) -> SQLFragment { SQLFragment(text: value ? "1" : "0") }
}
