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
///   Date → real seconds since 1970; UUID → lowercase text; Data → base64 text; RawRepresentable
///   enums → their raw value's column; any other Codable → JSON text (sorted keys, ISO 8601
///   dates); Optional of any → nullable.
/// - A property added after rows were stored reads NULL for them: make it optional, or decode it
///   with `decodeIfPresent(…) ?? default` in `init(from:)` (synthesized Codable ignores property
///   defaults); otherwise fetching such a row throws ``TandemError/invalidRecord(_:)`` naming the
///   type, the property and the row.
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
