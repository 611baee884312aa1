import Foundation

/// A query for records of one type: a `#Predicate`, sort descriptors, a limit and an offset,
/// like SwiftData's `FetchDescriptor`.
///
/// ```swift
/// let query = RecordQuery<TodoItem>(#Predicate { !$0.done && $0.title.starts(with: "Buy") },
///                                   sortBy: [SortDescriptor(\.due), SortDescriptor(\.title)], limit: 20)
/// ```
///
/// Translated to SQL with bound arguments, each with Swift's meaning for every value, so that a
/// predicate selects exactly the records `filter` selects from what ``DatabaseReader/fetch(_:)``
/// returns: comparisons; `==`/`!=` with Swift's optional semantics; Bool key paths; `&&`, `||`,
/// `!` (never three-valued); `contains` over a constant collection; ranges (`...`, `..<`);
/// `starts(with:)` and `contains` on strings; `??`; captured constants of every mapped type and
/// expressions of them (`-1`, `-0.0`); to-one chains (`$0.folder?.name == x`, a subquery that is
/// NULL when Swift's `?.` gives nil; one level deep, deeper chains throw). Text compares as
/// Swift's `String` does (canonical equivalence; Characters in `starts(with:)` and `contains`),
/// dates as the `Date`s a fetch reads, a NaN constant as equal to nothing; enums by their raw
/// values when their `==` and `<` are the raw values', and values stored as JSON text (with
/// `Data`, `Float`, and enums ordered otherwise) decoded and compared by Swift inside the query.
/// `hasSuffix` is rejected by the `#Predicate` macro itself. Anything else (a key path through
/// another value, `$0.title.count`): `fetch` evaluates the predicate in Swift over the table,
/// and `count`, `ids` and delete-where throw naming the expression. Sorting: numbers, dates,
/// Bools, UUIDs and strings (in the order of their NFC forms, which is Swift's `String` order
/// wherever that is a consistent order) sort in SQL; other keys, and string descriptors with a
/// localized comparator, sort in Swift. Ties are broken by `id`.
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
    /// For a sort by dates, the check that the stored order of `select` is the order of the
    /// dates as read (``DateOrderCheck``).
    var dateOrder: DateOrderCheck?

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
        var orders: [SQLFragment] = [], readOrders: [SQLFragment] = [], dates: [String] = []
        var sortInSwift = filterInSwift
        for descriptor in query.sortBy where !sortInSwift {
            guard let keyPath = descriptor.keyPath, let column = try? layout.column(for: keyPath),
                let order = sqlOrder(descriptor, keyPath: keyPath, column: layout.readExpression(of: column, qualifiedBy: nil))
            else { sortInSwift = true; break }
            let direction = SQLFragment(text: descriptor.order == .forward ? " ASC" : " DESC")
            orders.append(order + direction)
            let isDate = OptionalType.unwrapped(type(of: keyPath).valueType) == Date.self
            readOrders.append((isDate ? DateSemantics.asRead(order) : order) + direction)
            if isDate { dates.append(column) }
        }
        var dateOrder: DateOrderCheck?
        if sortInSwift {
            for keyPath in query.sortBy.compactMap(\.keyPath) where !layout.relations.isEmpty {
                try RelationshipDepth.check(sortKeyPath: keyPath, layout: layout)
            }
            sql.text += " ORDER BY id"
        } else if dates.isEmpty {
            sql = ordered(sql, by: orders, limit: query.limit, offset: query.offset)
        } else {
            // The stored order first, which an index on the column serves, with one row more to
            // check the last one against; the order of the dates as read where that differs.
            var stored = sql
            if columns != "*" {
                stored.text = stored.text.replacingOccurrences(of: "SELECT \(columns) ", with: "SELECT \(columns), \(dates.map(SQLText.identifier).joined(separator: ", ")) ")
            }
            dateOrder = DateOrderCheck(
                columns: dates, exact: ordered(sql, by: readOrders, limit: query.limit, offset: query.offset),
                limit: query.limit, offset: query.offset)
            sql = ordered(stored, by: orders, limit: query.limit.map { $0 + query.offset + 1 }, offset: 0)
        }
        return RecordSQL(select: sql, filterInSwift: filterInSwift, sortInSwift: sortInSwift, dateOrder: dateOrder)
    }

    /// `sql ORDER BY orders…, id LIMIT ? OFFSET ?`.
    private static func ordered(_ sql: SQLFragment, by orders: [SQLFragment], limit: Int?, offset: Int) -> SQLFragment {
        var sql = sql
        sql.text += " ORDER BY "
        for order in orders { sql = sql + order + SQLFragment(text: ", ") }
        sql.text += "id"
        if limit != nil || offset > 0 {
            sql = sql + SQLFragment(text: " LIMIT ? OFFSET ?", arguments: [.integer(Int64(limit ?? -1)), .integer(Int64(offset))])
        }
        return sql
    }

    /// The SQL that orders as Swift's sort does, for the value types that have one: numbers and
    /// Bools as stored, dates as stored (in the order of the dates read, checked by
    /// ``DateOrderCheck``), UUIDs lower-cased, text
    /// by ``SwiftStringFunctions/collation`` (NFC order, Swift's `<` wherever that is a
    /// consistent order). Nil for other keys, and string descriptors with a localized
    /// comparator: those sort in Swift.
    private static func sqlOrder<R>(_ descriptor: SortDescriptor<R>, keyPath: AnyKeyPath, column: SQLFragment) -> SQLFragment? {
        if var comparator = descriptor.stringComparator {
            comparator.order = .forward
            if comparator != .lexical { return nil }  // localized orders are Swift's only
        }
        switch OptionalType.unwrapped(type(of: keyPath).valueType) {
        case is String.Type: return column + SQLFragment(text: " COLLATE \(SwiftStringFunctions.collation)")
        case is Date.Type: return column  // as stored; see ``DateOrderCheck``
        case is UUID.Type: return SQLFragment(text: "lower(") + column + SQLFragment(text: ")")
        case is Bool.Type, is Double.Type, is Int.Type, is Int64.Type, is Int32.Type, is Int16.Type, is Int8.Type, is UInt32.Type, is UInt16.Type, is UInt8.Type:
            return column
        default:
            return nil
        }
    }
}
