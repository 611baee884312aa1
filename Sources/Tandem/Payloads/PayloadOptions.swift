import Foundation

/// How ``DatabaseWriter/importJSON(_:into:options:)`` maps and diffs a JSON payload.
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
    /// How the payload's objects are framed: one JSON array (the default), or newline-delimited.
    public var format = PayloadFormat.array

    public init(
        keyMap: [String: String] = [:], deleteMissing: Bool = false, scope: (column: String, value: String)? = nil,
        nested: [String: String] = [:], strict: Bool = false, format: PayloadFormat = .array
    ) {
        self.keyMap = keyMap
        self.deleteMissing = deleteMissing
        self.scope = scope
        self.nested = nested
        self.strict = strict
        self.format = format
    }
}

/// How a payload's objects follow one another.
public enum PayloadFormat: String, Sendable {
    /// One JSON array of objects: `[{"id":"a"},{"id":"b"}]`.
    case array
    /// Newline-delimited JSON (NDJSON, JSON Lines): one object per line, as `jq -c` writes them
    /// and many export endpoints serve them. Objects may also span lines; only white space may
    /// come between them.
    case ndjson
}

/// How far an import has read, handed to its progress callback.
public struct ImportProgress: Sendable, Equatable {
    /// Elements read (and written) so far.
    public var elements: Int
    /// Bytes of the payload read so far.
    public var bytesRead: Int64
    /// The payload's size, when the source knows it (a file, bytes in memory; not a pipe).
    public var totalBytes: Int64?

    public init(elements: Int, bytesRead: Int64, totalBytes: Int64?) {
        self.elements = elements
        self.bytesRead = bytesRead
        self.totalBytes = totalBytes
    }

    /// The part of the payload read, from 0 to 1, when its size is known.
    public var fractionRead: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return min(1, Double(bytesRead) / Double(totalBytes))
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

/// Key style of ``DatabaseReader/exportJSON(table:where:keys:)``.
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
