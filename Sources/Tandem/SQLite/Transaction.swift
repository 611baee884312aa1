import CSQLite
import Foundation

extension Connection {
    /// Runs `body` in one read transaction (one consistent snapshot) on this connection;
    /// writing inside it throws ``TandemError/readOnly(path:)``.
    func readTransaction<T>(_ body: (Transaction) throws -> T) throws -> T {
        try control(.begin)
        inReadTransaction = true
        defer { inReadTransaction = false; rollbackIfNeeded() }
        let value = try withoutTransactionControl { try body(Transaction(connection: self, isReadOnly: true)) }
        try control(.commit)
        return value
    }
}

/// Access to the database inside a write or a read of ``SharedDatabase`` (`write(_:)`, `read(_:)`).
///
/// Valid only inside the closure it was passed to. Not Sendable.
public struct Transaction {
    let connection: Connection
    /// True inside a read (`SharedDatabase.read(_:)`).
    public let isReadOnly: Bool

    /// Runs one or more `;`-separated statements; `?` parameters take `arguments` in order.
    ///
    /// Tandem's own tables (its settings, upload queue, counters and the tables behind the
    /// views) are written by Tandem only: SQL that writes them, or creates, changes or drops
    /// them, is refused; write the rows through the tables' views.
    /// - Throws: ``SQLiteError`` naming the SQL; ``TandemError/invalidArguments(_:)`` on a count mismatch;
    ///   ``TandemError/readOnly(path:)`` for a write inside a read;
    ///   ``TandemError/invalidSQL(sql:reason:)`` for SQL that writes Tandem's own tables.
    public func execute(_ sql: String, _ arguments: [any DatabaseValueConvertible] = []) throws {
        try connection.asUser {
            try refuseWritesInRead(sql)
            try connection.executeScript(sql, arguments: arguments.map(\.databaseValue))
        }
    }

    /// Runs Tandem's own statements, which may write Tandem's tables; never the user's SQL.
    func executeOwn(_ sql: String, _ arguments: [any DatabaseValueConvertible] = []) throws {
        try connection.executeScript(sql, arguments: arguments.map(\.databaseValue))
    }

    /// Inside ``SharedDatabase/read(_:)``: `sql` must be one statement that writes nothing. The
    /// statement is prepared into the cache, where `executeScript` then finds it.
    private func refuseWritesInRead(_ sql: String) throws {
        guard isReadOnly else { return }
        guard try connection.cachedStatement(sql).isReadOnly else { throw TandemError.readOnly(path: connection.path) }
    }

    /// Runs one or more `;`-separated statements, like ``execute(_:_:)``, and returns the rows of
    /// those that return rows (a SELECT, a `RETURNING` clause) and the number of rows changed.
    ///
    /// A `RETURNING` clause of an INSERT or UPDATE through a table's view returns the rows as
    /// stored, the id a new row was given included (SQLite alone would return the values the
    /// statement gave the view: a NULL id).
    public func run(_ sql: String, _ arguments: [any DatabaseValueConvertible] = []) throws -> ScriptResult {
        try connection.asUser {
            let values = arguments.map(\.databaseValue)
            try refuseWritesInRead(sql)
            var sets: [ResultSet] = []
            connection.rowCount = RowCount()
            defer { connection.rowCount = nil }
            try connection.executeScript(sql, arguments: values, results: { sets.append($0) }, rows: returnedRows)
            return ScriptResult(resultSets: sets, rowsChanged: connection.rowCount?.total ?? 0)
        }
    }

    /// Runs one statement and returns all its rows (a `RETURNING` clause's as stored, as ``run(_:_:)`` does).
    /// - Throws: ``SQLiteError`` naming the SQL.
    public func fetchAll(_ sql: String, _ arguments: [any DatabaseValueConvertible] = []) throws -> [Row] {
        try connection.asUser {
            try connection.withCachedStatement(sql) { statement in
                if isReadOnly && !statement.isReadOnly { throw TandemError.readOnly(path: connection.path) }
                return try returnedRows(statement, arguments.map(\.databaseValue))
            }
        }
    }

    /// Steps through the rows of one statement that writes nothing, one at a time, without
    /// holding them all (a large table's rows, say).
    /// - Throws: ``SQLiteError`` naming the SQL; ``TandemError/readOnly(path:)`` for a statement
    ///   that writes; whatever `body` throws, which ends the loop.
    public func forEachRow(_ sql: String, _ arguments: [any DatabaseValueConvertible] = [], _ body: (Row) throws -> Void) throws {
        try connection.asUser {
            if try !connection.cachedStatement(sql).isReadOnly { throw TandemError.readOnly(path: connection.path) }
            try connection.forEachRow(sql, arguments.map(\.databaseValue)) { row in
                try body(row)
                return true
            }
        }
    }

    /// The first row of one statement, or `nil`.
    public func fetchOne(_ sql: String, _ arguments: [any DatabaseValueConvertible] = []) throws -> Row? {
        try fetchAll(sql, arguments).first
    }

    /// The first column of the first row, or `.null` when there is no row.
    public func scalar(_ sql: String, _ arguments: [any DatabaseValueConvertible] = []) throws -> DatabaseValue {
        try connection.asUser {
            try connection.withCachedStatement(sql) { statement in
                if isReadOnly && !statement.isReadOnly { throw TandemError.readOnly(path: connection.path) }
                if statement.writeTarget != nil, statement.columnCount > 0 {
                    return try returnedRows(statement, arguments.map(\.databaseValue)).first?[0] ?? .null
                }
                return try statement.scalar(arguments.map(\.databaseValue))
            }
        }
    }

    /// The rows `statement` returns: as the ``ConnectionRules`` give them for a statement that
    /// writes through a view (its `RETURNING` clause's rows as stored), otherwise SQLite's.
    func returnedRows(_ statement: Statement, _ arguments: [DatabaseValue]) throws -> [Row] {
        if let rules = connection.rules, let rows = try rules.rowsReturned(by: statement, arguments, in: self) { return rows }
        return try statement.fetchAll(arguments)
    }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE (`sqlite3_changes64`).
    public var changes: Int64 { Int64(sqlite3_changes64(connection.handle)) }
}
