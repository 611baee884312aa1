/// What reads a Tandem database: transactions that see one snapshot, SQL queries, and live
/// queries that follow every commit of every process. ``SharedDatabase`` is one (opened
/// read-only, it is only one); code that only reads can take `some DatabaseReader` and be
/// handed a read-only database or a test double.
///
/// The shape follows GRDB's `DatabaseReader` (https://swiftpackageindex.com/groue/grdb.swift/documentation/grdb/databasereader).
public protocol DatabaseReader: AnyObject, Sendable {
    /// The database file's path.
    var path: String { get }
    /// Runs `body` in a read transaction: one snapshot, whatever other processes commit meanwhile.
    /// Blocks the calling thread.
    func read<T>(_ body: (Transaction) throws -> T) throws -> T
    /// ``read(_:)`` from a task, on one of Tandem's threads.
    func read<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T
    /// The rows of one SQL query (`?` arguments bound in order).
    func fetchAll(_ sql: String, _ arguments: [any DatabaseValueConvertible]) throws -> [Row]
    /// A live query: `onChange` gets the rows now and again after every commit (of any process)
    /// that changes them, on the query's own queue, until the result is cancelled or released.
    func observe(
        _ sql: String, _ arguments: [any DatabaseValueConvertible],
        onChange: @escaping @Sendable (Result<[Row], Error>) -> Void
    ) throws -> AnyDatabaseCancellable
    /// A live query as an asynchronous sequence of results.
    func watch(_ sql: String, _ arguments: [any DatabaseValueConvertible]) -> AsyncThrowingStream<[Row], Error>
}

/// What also writes a Tandem database: write transactions, whose changes to synced tables are
/// queued for upload. A ``SharedDatabase`` opened for writing is one.
///
/// The shape follows GRDB's `DatabaseWriter` (https://swiftpackageindex.com/groue/grdb.swift/documentation/grdb/databasewriter).
public protocol DatabaseWriter: DatabaseReader {
    /// Runs `body` in a write transaction (the cross-process write lock held); commits when it
    /// returns, rolls back when it throws. Blocks the calling thread.
    func write<T>(_ body: (Transaction) throws -> T) throws -> T
    /// ``write(_:)`` from a task, on one of Tandem's threads; cancelling the task while it waits
    /// for the write lock throws `CancellationError`.
    func write<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T
    /// Runs SQL statements in one write transaction.
    func execute(_ sql: String, _ arguments: [any DatabaseValueConvertible]) throws
}

extension SharedDatabase: DatabaseWriter {}
