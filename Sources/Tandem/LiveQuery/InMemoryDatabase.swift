import Foundation
import Synchronization

/// A Tandem database in memory: a test double for code written against ``DatabaseReader`` and
/// ``DatabaseWriter``.
///
/// It installs the schema as ``SharedDatabase`` does (the same views, triggers, write rules,
/// search indexes and migrations), so SQL, records, predicates, live queries, search, import
/// and export behave as they do on a file, and writes to synced tables queue CRUD entries. What
/// it lacks is what a file shares: there is no file, no other process, no write lock, no WAL
/// and no sync. Its live queries follow its own commits only.
///
/// ```swift
/// func openTodos(_ db: some DatabaseReader) throws -> [Todo] {
///     try db.fetch(Todo.self, where: #Predicate { !$0.done })
/// }
/// let db = try InMemoryDatabase(schema: Schema(records: [RecordTable(Todo.self)]))
/// try db.insert(Todo(id: "", title: "Buy milk", done: false))
/// #expect(try openTodos(db).count == 1)
/// ```
///
/// One connection serves every read and write, one at a time (a transaction started inside
/// another throws ``TandemError/misuse(_:)``). Released, its data is gone.
///
/// GRDB's `DatabaseQueue()` plays the same part there
/// (https://swiftpackageindex.com/groue/grdb.swift/documentation/grdb/databasequeue); SQLite's
/// in-memory databases: https://www.sqlite.org/inmemorydb.html
public final class InMemoryDatabase: DatabaseWriter, @unchecked Sendable {
    // @unchecked: `connection` is used only with `lock` held, by the thread in `holder`.
    /// `:memory:`, SQLite's name for a database in memory.
    public let path = ":memory:"
    /// The schema it was made with.
    public let schema: Schema
    private let connection: Connection
    private let lock = NSLock()
    private let holder = Atomic<UInt>(0)
    private let subscribers = Mutex<[UUID: (changed: @Sendable (DatabaseChange) -> Void, end: @Sendable (any Error) -> Void)]>([:])

    /// Makes an empty database in memory with `schema` installed (its migrations recorded as run).
    /// - Throws: ``TandemError/invalidSchema(_:)`` for a schema that is not valid.
    public init(schema: Schema) throws {
        try schema.validate()
        self.schema = schema
        connection = try Connection(path: path, readOnly: false, busyTimeoutMilliseconds: 0, rules: LayoutRules())
        connection.trackChanges()
        _ = try write { tx in _ = try MigrationRunner.migrate(to: schema, in: tx) }
    }

    /// Runs `body` in a read transaction.
    /// - Throws: what `body` throws; ``TandemError/misuse(_:)`` inside another transaction of
    ///   this database on the same thread.
    public func read<T>(_ body: (Transaction) throws -> T) throws -> T {
        try exclusively { try connection.readTransaction(body) }
    }

    /// Runs `body` in a write transaction: commits when it returns, rolls back when it throws;
    /// then the live queries that read a changed table run again.
    /// - Throws: what `body` throws; ``TandemError/misuse(_:)`` inside another transaction of
    ///   this database on the same thread.
    @discardableResult
    public func write<T>(_ body: (Transaction) throws -> T) throws -> T {
        let (value, change) = try exclusively { () -> (T, DatabaseChange?) in
            try connection.control(.beginImmediate)
            _ = connection.takeChangedTables()
            do {
                let schemaAtBegin = try connection.scalar("PRAGMA schema_version")
                let changesBefore = connection.totalChanges
                let value = try connection.withoutTransactionControl { try body(Transaction(connection: connection, isReadOnly: false)) }
                let changed = connection.takeChangedTables()
                try connection.endUploadTransaction(ifQueuedIn: changed)
                // A schema change, or rows changed that the preupdate hook did not report: any
                // table may read differently now, as a file's writer stamps it.
                let unknown =
                    try connection.scalar("PRAGMA schema_version") != schemaAtBegin || (changed.isEmpty && connection.totalChanges != changesBefore)
                try connection.control(.commit)
                return (value, unknown ? .unknown : changed.isEmpty ? nil : DatabaseChange(rawTables: changed))
            } catch {
                connection.rollbackIfNeeded()
                _ = connection.takeChangedTables()
                throw error
            }
        }
        if let change {
            for subscriber in subscribers.withLock({ Array($0.values) }) { subscriber.changed(change) }
        }
        return value
    }

    /// ``read(_:)`` from a task, on another thread.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T {
        try Task.checkCancellation()
        return try await awaitBlocking { try self.read(body) }
    }

    /// ``write(_:)`` from a task, on another thread.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T {
        try Task.checkCancellation()
        return try await awaitBlocking { try self.write(body) }
    }

    /// A live query of any read, run again after each of this database's commits that changes
    /// a table of `readSet` (``DatabaseReader/observe(readSet:load:onChange:)``).
    public func observe<Value: Equatable & Sendable>(
        readSet tables: Set<String>, load: @escaping @Sendable (Transaction) throws -> Value,
        onChange: @escaping @Sendable (Result<Value, Error>) -> Void
    ) throws -> AnyDatabaseCancellable {
        let query = LiveQuery(database: self, readSet: InternalTables.withDataTables(tables), load: load, deliver: onChange)
        let token = UUID()
        subscribers.withLock { $0[token] = ({ [weak query] change in query?.changed(change) }, { [weak query] in query?.end($0) }) }
        query.schedule()
        return AnyDatabaseCancellable { [weak self] in
            query.finish()
            _ = self?.subscribers.withLock { $0.removeValue(forKey: token) }
        }
    }

    /// Runs `body` with the connection to itself.
    private func exclusively<T>(_ body: () throws -> T) throws -> T {
        let me: UInt = pthread_self()
        if holder.load(ordering: .relaxed) == me {
            throw TandemError.misuse("a transaction was started inside another one on the same thread (\(path)); run the statements in the outer transaction")
        }
        lock.lock()
        holder.store(me, ordering: .relaxed)
        defer {
            holder.store(0, ordering: .relaxed)
            lock.unlock()
        }
        return try body()
    }

    /// Closes the connection; live queries still running end with ``TandemError/misuse(_:)``.
    deinit {
        for subscriber in subscribers.withLock({ Array($0.values) }) { subscriber.end(TandemError.misuse("the database in memory was released; its live queries ended")) }
        connection.close(checkpointing: false)
    }
}
