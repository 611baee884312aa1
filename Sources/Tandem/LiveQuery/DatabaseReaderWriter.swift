/// What reads a Tandem database: transactions that see one snapshot, and live queries that
/// follow every commit. ``SharedDatabase`` is one (opened read-only, it is only one), and so is
/// ``InMemoryDatabase``, a test double; code that only reads can take `some DatabaseReader`.
///
/// Everything else that reads is written once, against this protocol: SQL (``fetchAll(_:_:)``),
/// live queries (``observe(_:_:onChange:)``, ``watch(_:_:)``), records
/// (``fetch(_:where:sortBy:)``, ``watch(_:throttle:)``), search and export.
///
/// The shape follows GRDB's `DatabaseReader`, whose records and `ValueObservation` take the
/// protocol too (https://swiftpackageindex.com/groue/grdb.swift/documentation/grdb/databasereader).
public protocol DatabaseReader: AnyObject, Sendable {
    /// The database file's path (`:memory:` for a database in memory).
    var path: String { get }
    /// The declared schema: its tables, columns and migrations.
    var schema: Schema { get }
    /// Runs `body` in a read transaction: one snapshot, whatever is committed meanwhile.
    /// Writing inside it throws ``TandemError/readOnly(path:)``. Blocks the calling thread.
    func read<T>(_ body: (Transaction) throws -> T) throws -> T
    /// ``read(_:)`` from a task, on one of Tandem's threads.
    func read<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T
    /// A live query of any read: `load` runs in one read transaction now, and again after every
    /// commit (of any process) that changes a table of `readSet`; `onChange` gets its value
    /// when it differs from the last one delivered, or one error after which the query ends.
    /// Calls come on the query's own serial queue, one at a time.
    /// - Parameters:
    ///   - readSet: the declared tables (or other tables) `load` reads, by name.
    ///   - load: the read; it runs on the query's queue.
    ///   - onChange: gets each new value, or the error that ended the query.
    /// - Returns: an ``AnyDatabaseCancellable``; the query runs until it is cancelled or released.
    /// - Throws: an error when the change observer cannot start.
    func observe<Value: Equatable & Sendable>(
        readSet: Set<String>, load: @escaping @Sendable (Transaction) throws -> Value,
        onChange: @escaping @Sendable (Result<Value, Error>) -> Void
    ) throws -> AnyDatabaseCancellable
}

/// What also writes a Tandem database: write transactions, whose changes to synced tables are
/// queued for upload. A ``SharedDatabase`` opened for writing is one, and so is
/// ``InMemoryDatabase``; records' writes and imports are written against this protocol.
///
/// The shape follows GRDB's `DatabaseWriter` (https://swiftpackageindex.com/groue/grdb.swift/documentation/grdb/databasewriter).
public protocol DatabaseWriter: DatabaseReader {
    /// Runs `body` in a write transaction; commits when it returns, rolls back when it throws.
    /// Blocks the calling thread (for a ``SharedDatabase``, while other writers of any process
    /// hold the write lock).
    func write<T>(_ body: (Transaction) throws -> T) throws -> T
    /// ``write(_:)`` from a task, on one of Tandem's threads; cancelling the task while it waits
    /// for the write lock throws `CancellationError`.
    func write<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T
}

extension DatabaseReader {
    /// Fetches all rows of one statement in a read transaction.
    /// - Throws: ``SQLiteError`` naming the SQL; ``TandemError/readOnly(path:)`` for SQL that writes.
    public func fetchAll(_ sql: String, _ arguments: [any DatabaseValueConvertible] = []) throws -> [Row] {
        try read { try $0.fetchAll(sql, arguments) }
    }
}

extension DatabaseWriter {
    /// Runs SQL (one or several `;`-separated statements) in one write transaction.
    /// - Throws: what ``Transaction/execute(_:_:)`` throws.
    public func execute(_ sql: String, _ arguments: [any DatabaseValueConvertible] = []) throws {
        try write { try $0.execute(sql, arguments) }
    }
}

extension SharedDatabase: DatabaseWriter {}
