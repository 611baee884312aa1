import Foundation

/// A query for records of one type: a `#Predicate`, sort descriptors, a limit and an offset,
/// like SwiftData's `FetchDescriptor`.
///
/// ```swift
/// let query = RecordQuery<TodoItem>(#Predicate { !$0.done && $0.title.starts(with: "Buy") },
///                                   sortBy: [SortDescriptor(\.due), SortDescriptor(\.title)], limit: 20)
/// ```
///
/// Translated to SQL with bound arguments: comparisons; `==`/`!=` with Swift's optional
/// semantics (`IS`/`IS NOT`, never three-valued); Bool key paths; `&&`, `||`, `!`; `contains` over
/// a constant collection (`IN`); ranges (`...`, `..<`); `starts(with:)` and `contains` on strings,
/// case-sensitive as in Swift; `??`; captured constants of every mapped type; to-one chains
/// (`$0.folder?.name == x`, a subquery that is NULL when Swift's `?.` gives nil; one level deep,
/// deeper chains throw). `hasSuffix` is rejected by the `#Predicate` macro itself. Anything else
/// (a key path through another value, string methods `#Predicate` does not translate): ``fetch``
/// evaluates the predicate in Swift over the table, and `count`, `ids` and delete-where throw
/// naming the expression. Sorting: numbers, dates, Bools, UUIDs and strings (code-point order,
/// which is Swift's `String` order for text in NFC) sort in SQL; other keys, and string
/// descriptors with a localized comparator, sort in Swift. Ties are broken by `id`.
public struct RecordQuery<R: Record>: @unchecked Sendable {
    // @unchecked: Predicate and SortDescriptor hold key paths of R, which are immutable values.
    public var predicate: Predicate<R>?
    public var sortBy: [SortDescriptor<R>]
    /// At most this many records (nil: all).
    public var limit: Int?
    /// Records to skip first.
    public var offset: Int

    public init(_ predicate: Predicate<R>? = nil, sortBy: [SortDescriptor<R>] = [], limit: Int? = nil, offset: Int = 0) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.limit = limit
        self.offset = max(0, offset)
    }
}

/// A query's SQL, or what must happen in Swift.
struct RecordSQL {
    var select: SQLFragment
    /// The predicate to evaluate in Swift over every row (it did not translate).
    var filterInSwift: Bool
    /// Sorting, limit and offset happen in Swift (a sort did not translate, or filtering does).
    var sortInSwift: Bool

    /// The SELECT for `query` over `layout`'s table.
    static func make<R: Record>(_ query: RecordQuery<R>, layout: RecordLayout, columns: String = "*") throws -> RecordSQL {
        var sql = SQLFragment(text: "SELECT \(columns) FROM \(SQLText.identifier(layout.tableName))")
        var filterInSwift = false
        if let predicate = query.predicate {
            let context = PredicateContext(layout: layout, predicate: predicate)
            if !layout.relations.isEmpty { try RelationshipDepth.check(predicate.expression, context) }
            do {
                sql = sql + SQLFragment(text: " WHERE ") + (try context.translate(predicate.expression))
            } catch is Untranslatable {
                filterInSwift = true
            }
        }
        var orders: [SQLFragment] = []
        var sortInSwift = filterInSwift
        for descriptor in query.sortBy where !sortInSwift {
            guard let keyPath = descriptor.keyPath, sortsInSQL(descriptor, keyPath: keyPath),
                  let column = try? layout.column(for: keyPath) else { sortInSwift = true; break }
            orders.append(layout.readExpression(of: column, qualifiedBy: nil) + SQLFragment(text: descriptor.order == .forward ? " ASC" : " DESC"))
        }
        if sortInSwift {
            for keyPath in query.sortBy.compactMap(\.keyPath) where !layout.relations.isEmpty {
                try RelationshipDepth.check(sortKeyPath: keyPath, layout: layout)
            }
            sql.text += " ORDER BY id"
        } else {
            sql.text += " ORDER BY "
            for order in orders { sql = sql + order + SQLFragment(text: ", ") }
            sql.text += "id"
            if query.limit != nil || query.offset > 0 {
                sql = sql + SQLFragment(text: " LIMIT ? OFFSET ?", arguments: [.integer(Int64(query.limit ?? -1)), .integer(Int64(query.offset))])
            }
        }
        return RecordSQL(select: sql, filterInSwift: filterInSwift, sortInSwift: sortInSwift)
    }

    /// Only value types whose SQL order is Swift's order sort in SQL.
    private static func sortsInSQL<R>(_ descriptor: SortDescriptor<R>, keyPath: AnyKeyPath) -> Bool {
        if var comparator = descriptor.stringComparator {
            comparator.order = .forward
            if comparator != .lexical { return false }  // localized orders are Swift's only
        }
        var valueType: Any.Type = type(of: keyPath).valueType
        if let optional = valueType as? any OptionalProtocol.Type { valueType = optional.wrappedType }
        switch valueType {
        case is String.Type, is Bool.Type, is Double.Type, is Float.Type, is Date.Type, is UUID.Type,
             is Int.Type, is Int64.Type, is Int32.Type, is Int16.Type, is Int8.Type, is UInt32.Type, is UInt16.Type, is UInt8.Type:
            return true
        default:
            return false
        }
    }
}

