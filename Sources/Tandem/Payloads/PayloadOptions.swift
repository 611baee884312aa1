import Foundation

/// How ``SharedDatabase/importJSON(_:into:options:)`` maps and diffs a JSON payload.
public struct ImportOptions: Sendable {
    /// Payload keys mapped to columns explicitly (`--map key=column`), before the conventions;
    /// `id` as the column takes the row's id from that key. A target that is neither `id` nor a
    /// column of a table of the import is refused, as are two keys of one element that reach
    /// the same column.
    public var keyMap: [String: String] = [:]
    /// Rows absent from the payload are deleted (within ``scope``, when given).
    public var deleteMissing = false
    /// Only rows whose `column` holds `value` are compared (and deleted when missing): a
    /// payload that is one parent's children (`--scope note_id=N1`).
    public var scope: (column: String, value: String)?
    /// Payload keys whose arrays of objects go into a related table (`--nested items=todo_items`),
    /// each child's `{parent}_id` set to its parent's id.
    public var nested: [String: String] = [:]
    /// A key that maps to no column is an error (by default it is left alone).
    public var strict = false

    public init(keyMap: [String: String] = [:], deleteMissing: Bool = false, scope: (column: String, value: String)? = nil,
                nested: [String: String] = [:], strict: Bool = false) {
        self.keyMap = keyMap
        self.deleteMissing = deleteMissing
        self.scope = scope
        self.nested = nested
        self.strict = strict
    }
}

/// What an import changed, per table.
public struct ImportResult: Sendable, Equatable, CustomStringConvertible {
    public struct Counts: Sendable, Equatable {
        public var inserted = 0, updated = 0, deleted = 0, unchanged = 0
    }
    /// Counts by table name, the imported table and every nested one.
    public var tables: [String: Counts] = [:]

    public var description: String {
        tables.keys.sorted().map { name in
            let c = tables[name]!
            return "\(name): \(c.inserted) inserted, \(c.updated) updated, \(c.deleted) deleted, \(c.unchanged) unchanged"
        }.joined(separator: "\n")
    }
}

/// Key style of ``SharedDatabase/exportJSON(table:where:keys:)``.
public enum KeyStyle: String, Sendable {
    /// Column names as they are (`created_at`).
    case snake
    /// `createdAt` for `created_at`.
    case camel
}

/// Name conventions between payload keys and columns.
enum KeyConvention {
    /// `createdAt` → `created_at`.
    static func snake(_ key: String) -> String { RecordLayout.snakeCase(key) }

    /// `created_at` → `createdAt`.
    static func camel(_ column: String) -> String {
        let parts = column.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count > 1 else { return column }
        return String(parts[0]) + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }
}
