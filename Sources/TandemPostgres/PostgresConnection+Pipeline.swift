import CLibPQ
import Foundation

/// libpq's pipeline mode: several statements sent at once and their results read in order, one
/// round trip for all of them instead of one each.
///
/// Related documentation: https://www.postgresql.org/docs/15/libpq-pipeline-mode.html
extension PostgresConnection {
    /// One statement of a pipeline: SQL with text parameters (`$1`…; nil is NULL).
    struct Statement {
        var sql: String
        var parameters: [String?] = []
    }

    /// Sends `statements` in one pipeline and returns each one's rows as text (nil for NULL).
    /// After a failure the server runs none of the statements after it (a transaction they are
    /// in is left failed: the caller rolls it back).
    /// - Throws: ``PostgresError`` of the first statement that failed, with its SQLSTATE; one
    ///   that counts as a lost connection when the pipeline could not be sent or ended (the
    ///   connection is then ``isBroken``, never used again with statements of this one pending).
    ///
    /// A statement with parameters that this connection runs a second time is prepared first,
    /// in the same pipeline, and executed by name from then on (``PostgresPreparedStatements``).
    func pipeline(_ statements: [Statement]) throws -> [[[String?]]] {
        for statement in statements { try Self.refuseNUL(in: statement.parameters, sql: statement.sql) }
        return try pipeline(statements, uses: statements.map { preparedStatements.use(for: $0.sql, parameterCount: $0.parameters.count) })
    }

    /// ``pipeline(_:)`` with each statement sent as `uses` says (NULs refused already).
    func pipeline(_ statements: [Statement], uses: [PostgresPreparedStatements.Use]) throws -> [[[String?]]] {
        roundTrips += 1
        var answered = 0
        defer {
            // Prepares never answered (the pipeline could not be sent or read) hold no name.
            for (statement, use) in zip(statements, uses).dropFirst(answered) {
                if case .prepare(let name) = use { preparedStatements.prepared(statement.sql, as: name, succeeded: false) }
            }
        }
        guard tandem_PQenterPipelineMode(handle) == 1 else { throw unusable(failure(sql: nil, result: nil)) }
        defer { if tandem_PQexitPipelineMode(handle) != 1 { isUnusable = true } }
        for (statement, use) in zip(statements, uses) {
            let count = Int32(statement.parameters.count)
            let sent = withParameters(statement.parameters) { values in
                switch use {
                case .unnamed:
                    return tandem_PQsendQueryParams(handle, statement.sql, count, nil, values, nil, nil, 0)
                case .prepare(let name):
                    guard tandem_PQsendPrepare(handle, name, statement.sql, count, nil) == 1 else { return 0 }
                    return tandem_PQsendQueryPrepared(handle, name, count, values, nil, nil, 0)
                case .execute(let name):
                    return tandem_PQsendQueryPrepared(handle, name, count, values, nil, nil, 0)
                }
            }
            guard sent == 1 else { throw unusable(failure(sql: statement.sql, result: nil)) }
        }
        guard tandem_PQpipelineSync(handle) == 1 else { throw unusable(failure(sql: nil, result: nil)) }
        var rows: [[[String?]]] = []
        var firstFailure: PostgresError?
        for (statement, use) in zip(statements, uses) {
            if case .prepare(let name) = use {
                // The prepare's answer comes first, ending with NULL as a statement's do.
                var prepared = false
                while let result = tandem_PQgetResult(handle) {
                    defer { tandem_PQclear(result) }
                    switch tandem_PQresultStatus(result) {
                    case PGRES_COMMAND_OK: prepared = true
                    case PGRES_PIPELINE_ABORTED: break
                    default: if firstFailure == nil { firstFailure = failure(sql: statement.sql, result: result) }
                    }
                }
                preparedStatements.prepared(statement.sql, as: name, succeeded: prepared)
            }
            answered += 1
            // A statement's results end with NULL.
            var statementRows: [[String?]] = []
            while let result = tandem_PQgetResult(handle) {
                defer { tandem_PQclear(result) }
                switch tandem_PQresultStatus(result) {
                case PGRES_COMMAND_OK, PGRES_EMPTY_QUERY, PGRES_PIPELINE_ABORTED:
                    break
                case PGRES_TUPLES_OK:
                    statementRows = Self.rows(of: result)
                default:
                    if firstFailure == nil {
                        firstFailure = failure(sql: statement.sql, result: result)
                        preparedStatements.failed(statement.sql, sqlState: firstFailure?.sqlState)
                    }
                }
            }
            rows.append(statementRows)
            if isBroken { break }
        }
        // The pipeline's end: its synchronization point.
        if !isBroken, let sync = tandem_PQgetResult(handle) { tandem_PQclear(sync) }
        if let firstFailure { throw firstFailure }
        if isBroken { throw failure(sql: nil, result: nil) }
        return rows
    }

    /// `error` as a lost connection, marking this one unusable.
    private func unusable(_ error: PostgresError) -> PostgresError {
        isUnusable = true
        return PostgresError(error.message, sqlState: error.sqlState, isConnectionFailure: true)
    }
}
