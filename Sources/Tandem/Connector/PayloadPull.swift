import Foundation

/// A pull (SwiftSync's way, for APIs that only return lists): a table's rows as the API holds
/// them, one JSON array or newline-delimited objects (each with an `id` and the columns it sets),
/// applied as a download: new rows inserted, changed ones written (only those), and rows the
/// payload lacks deleted within its scope. Nothing is queued for upload, and a row with an edit
/// waiting in the upload queue (or set aside) keeps it.
public struct PayloadPull: Sendable {
    /// The table the payload's rows belong to (a synced table).
    public var table: String
    /// The slice the payload covers (`folder_id = 'F1'`): only rows with that value are compared
    /// and deleted when missing, and every element must carry it; nil: the whole table.
    public var scope: PullScope?
    public var format: PayloadFormat
    /// Fetches the payload (an HTTP GET, a program's output).
    public var fetch: @Sendable () async throws -> Data

    public init(table: String, scope: PullScope? = nil, format: PayloadFormat = .array, fetch: @escaping @Sendable () async throws -> Data) {
        self.table = table
        self.scope = scope
        self.format = format
        self.fetch = fetch
    }
}

/// The rows a pull covers: those whose `column` holds the text `value`.
public struct PullScope: Sendable, Equatable {
    public var column: String
    public var value: String

    public init(column: String, value: String) {
        self.column = column
        self.value = value
    }
}

/// What a pull changed.
public struct PullResult: Sendable, Equatable, CustomStringConvertible {
    public var inserted = 0, updated = 0, deleted = 0, unchanged = 0
    /// Rows left as they are because an edit of them waits for upload (or is set aside).
    public var keptPending = 0

    public init() {}

    public var description: String {
        "\(inserted) inserted, \(updated) updated, \(deleted) deleted, \(unchanged) unchanged, \(keptPending) kept (pending upload)"
    }
}

extension SyncConnector {
    public var pulls: [PayloadPull] { [] }
}

extension DatabaseSync {
    /// Fetches `pull`'s payload and applies it (``applyPull(_:into:scope:format:)``).
    public func pull(_ pull: PayloadPull) async throws -> PullResult {
        let payload = try await pull.fetch()
        return try applyPull(payload, into: pull.table, scope: pull.scope, format: pull.format)
    }

    /// Applies a pull's payload to `table` in one write transaction, as a download (see
    /// ``PayloadPull``). Every element is checked first: an object with a text (or integer) `id`,
    /// each declared column's value of its type (text a string, integer an integer, real a
    /// number; null for any), the scope's column holding the scope's value; other keys are
    /// ignored. A refused payload changes nothing.
    /// - Throws: ``TandemError/invalidPayload(_:)`` naming the element, column and value;
    ///   ``TandemError/invalidArguments(_:)`` for a table that is not a synced one.
    public func applyPull(_ payload: Data, into table: String, scope: PullScope? = nil, format: PayloadFormat = .array) throws -> PullResult {
        guard let declared = database.schema.table(named: table), !declared.localOnly, !declared.insertOnly else {
            throw TandemError.invalidArguments("a pull goes into a synced table; \(table) is \(database.schema.table(named: table) == nil ? "not declared" : "not synced")")
        }
        let rows = try PullRows.read(payload, format: format, table: declared, scope: scope)
        let schema = database.schema
        return try database.write { tx in try PullRows.apply(rows, to: declared, scope: scope, schema: schema, in: tx) }
    }
}
