import Foundation

/// A Codable value type stored as a row of a Tandem table.
///
/// ```swift
/// struct TodoItem: Record {
///     var id = ""                  // an empty id is minted as a lowercase UUID on insert
///     var title: String
///     var done = false
///     var due: Date?
/// }
/// let item = try db.insert(TodoItem(title: "Buy milk"))      // item.id is set
/// let open = try db.fetch(RecordQuery<TodoItem>(#Predicate { !$0.done }, sortBy: [SortDescriptor(\.title)]))
/// ```
///
/// - Table: ``tableName`` (default: the type name in snake_case, `TodoItem` → `todo_item`).
/// - Columns: the Codable keys, `id` being the row id. A key path in a predicate or sort names
///   its property (`\TodoItem.title` → `title`), which must be a Codable key or be mapped by
///   ``keyPathColumns``; drift between them throws ``TandemError/invalidRecord(_:)`` naming the
///   type and property at first use, never a wrong column.
/// - Types (as PowerSync's SwiftData store maps them): String → text; Bool → integer 0/1;
///   Int, Int64, Int32 (and the other fixed-width integers) → integer; Double, Float → real;
///   Date → real seconds since 1970 (read back as `Date(timeIntervalSince1970:)`, see
///   ``RecordQuery``); UUID → lowercase text; Data → base64 text; URL → its absolute string;
///   RawRepresentable enums → their raw value's column; any other Codable → JSON text (sorted
///   keys, dates as ISO 8601 text in UTC with the fraction of a second they need; `Decimal` as its
///   number; enums with associated values); Optional of any → nullable. NaN and infinite reals
///   are refused naming the column.
/// - To-one relationships: an optional property whose type is another record (`var folder:
///   Folder?`) is not a column. It is stored as the related record's id in the text column
///   `{property}_id`, which the type declares (`var folder_id: String?`) and the derived schema
///   indexes. Fetches load it for every record in one query per relationship (no N+1), one level
///   deep (the loaded record's own relationships are nil); a dangling id loads nil. Writes store
///   only `folder_id`: set that to change the relationship. Predicates follow it in SQL
///   (`$0.folder?.name == "Inbox"` becomes a subquery). No foreign key is enforced (sync order
///   is free), as in PowerSync. To-many: ``DatabaseReader/fetchRelated(_:by:in:)``.
/// - A property added after rows were stored reads NULL for them. A ``DefaultedRecord`` (every
///   property has a default, so the type has `init()`) reads its `init()` value instead.
///   Otherwise make the property optional, or decode it with `decodeIfPresent(…) ?? default` in
///   `init(from:)` (synthesized Codable ignores property defaults); else fetching such a row
///   throws ``TandemError/invalidRecord(_:)`` naming the type, the property and the row.
///
/// Related documentation: https://docs.powersync.com/client-sdk-references/swift (PowerSync's SwiftData store)
public protocol Record: Codable, Sendable {
    /// The row id (a non-empty text once stored).
    var id: String { get set }
    /// The table's name; default `snake_case` of the type name.
    static var tableName: String { get }
    /// Property names mapped to columns, for properties whose Codable key differs (custom
    /// `CodingKeys`). Default: none.
    static var keyPathColumns: [String: String] { get }
}

extension Record {
    public static var tableName: String { RecordLayout.snakeCase(String(describing: Self.self)) }
    public static var keyPathColumns: [String: String] { [:] }
}

/// A record whose properties all have default values, so that it has `init()`: a NULL or missing
/// value of a non-optional property (a property added after rows were stored) reads as the value
/// `init()` gives it, instead of failing the fetch.
///
/// ```swift
/// struct TodoItem: DefaultedRecord {
///     var id = ""
///     var title = ""
///     var priority = 3        // added later: rows stored before read 3
/// }
/// ```
///
/// Swift's synthesized `Decodable` ignores property defaults; this is how Tandem applies them,
/// as SwiftData applies a new property's default in a lightweight migration.
public protocol DefaultedRecord: Record {
    init()
}
