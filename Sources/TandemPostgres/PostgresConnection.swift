import CLibPQ
import Foundation
import Tandem

/// One libpq connection. Not thread-safe: one thread at a time uses it (the backend's one
/// connection is behind its `Link` mutex, which is why it may be sent there; only poll(2) on its
/// socket happens without). Values travel in text format, bound as parameters.
///
/// Related documentation: https://www.postgresql.org/docs/15/libpq.html
final class PostgresConnection: @unchecked Sendable {
    let handle: OpaquePointer
    /// The connection string with any password removed, for messages.
    let safeName: String
    /// The connection string's passwords, hidden in every message.
    private let secrets: ConnectionSecrets
    /// Round trips made: statements run one at a time, and pipelines.
    var roundTrips = 0
    /// The statements prepared on this connection (see ``PostgresPreparedStatements``).
    var preparedStatements = PostgresPreparedStatements()

    /// - Throws: ``PostgresError`` naming the server (never the password) and libpq's reason, or
    ///   saying that libpq (`libpq.so.5`, loaded on the first connection) is not installed.
    init(_ conninfo: String) throws {
        secrets = ConnectionString.secrets(of: conninfo)
        safeName = secrets.redact(conninfo)
        // libpq is loaded on the first connection (shim.h): where it is missing, say so.
        if let reason = tandem_libpq_error() {
            throw PostgresError("cannot connect to \(safeName): the PostgreSQL client library is not installed (apt-get install libpq5): \(String(cString: reason))")
        }
        if let missing = tandem_libpq_missing_function() {
            throw PostgresError(
                "cannot connect to \(safeName): the installed PostgreSQL client library (libpq.so.5) has no \(String(cString: missing)); Tandem needs libpq 14 or later")
        }
        guard let handle = tandem_PQconnectdb(ConnectionString.normalized(conninfo)) else { throw PostgresError("cannot connect to \(safeName): out of memory") }
        // Checked before `self.handle` is set: a failed init must not reach deinit's PQfinish too.
        guard tandem_PQstatus(handle) == CONNECTION_OK else {
            let reason = secrets.redact(String(cString: tandem_PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines))
            tandem_PQfinish(handle)
            throw PostgresError("cannot connect to \(safeName): \(reason)", isConnectionFailure: true)
        }
        self.handle = handle
        // Server notices (a shutdown's FATAL line) are not printed on the process's stderr.
        tandem_PQsetNoticeProcessor(handle, { _, _ in }, nil)
        _ = try execute("SET client_min_messages = warning")
    }

    deinit { tandem_PQfinish(handle) }

    /// Runs one statement with text parameters (`$1`…; nil is NULL); returns the rows as text (nil for NULL).
    /// One that runs a second time is prepared first, in the same round trip (see
    /// ``PostgresPreparedStatements``), unless `preparing` is false: a statement whose bare
    /// parameters take their types from a table's columns must not keep them while the columns'
    /// types may change.
    @discardableResult
    func execute(_ sql: String, _ parameters: [String?] = [], preparing: Bool = true) throws -> [[String?]] {
        try Self.refuseNUL(in: parameters, sql: sql)
        let use = preparing ? preparedStatements.use(for: sql, parameterCount: parameters.count) : .unnamed
        if case .prepare = use { return try pipeline([Statement(sql: sql, parameters: parameters)], uses: [use])[0] }
        roundTrips += 1
        let result: OpaquePointer? = withParameters(parameters) { values in
            if case .execute(let name) = use { return tandem_PQexecPrepared(handle, name, Int32(parameters.count), values, nil, nil, 0) }
            return tandem_PQexecParams(handle, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        guard let result else { throw failure(sql: sql, result: nil) }
        defer { tandem_PQclear(result) }
        switch tandem_PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            return []
        case PGRES_TUPLES_OK:
            return Self.rows(of: result)
        default:
            let error = failure(sql: sql, result: result)
            preparedStatements.failed(sql, sqlState: error.sqlState)
            throw error
        }
    }

    /// libpq sends text parameters as C strings, which end at a NUL: a parameter holding one is
    /// refused (SQLSTATE 22021, as PostgreSQL refuses NUL in text), never sent cut short.
    static func refuseNUL(in parameters: [String?], sql: String) throws {
        guard parameters.contains(where: { $0?.utf8.contains(0) == true }) else { return }
        throw PostgresError(
            "a value holds a NUL character, which PostgreSQL text cannot store - while executing `\(sql.prefix(200))`", sqlState: "22021")
    }

    /// A result's rows as text (nil for NULL).
    static func rows(of result: OpaquePointer) -> [[String?]] {
        (0..<tandem_PQntuples(result)).map { row in
            (0..<tandem_PQnfields(result)).map { column in
                tandem_PQgetisnull(result, row, column) == 1 ? nil : String(cString: tandem_PQgetvalue(result, row, column))
            }
        }
    }

    /// Runs `body` in a transaction (at the server's default isolation unless `isolation` says
    /// otherwise, as in `REPEATABLE READ READ ONLY`), rolling back if it throws.
    func transaction<T>(isolation: String? = nil, _ body: () throws -> T) throws -> T {
        try transaction(beginning: { try $0.execute(Self.begin(isolation)) }) { _ in try body() }
    }

    /// The statement that begins a transaction at `isolation` (as in `REPEATABLE READ READ
    /// ONLY`), or at the server's default.
    static func begin(_ isolation: String?) -> String {
        isolation.map { "BEGIN ISOLATION LEVEL \($0)" } ?? "BEGIN"
    }

    /// Runs `body` in a transaction that `beginning` opens (its first statement, `BEGIN …`,
    /// sent with what else it reads in one round trip) and commits, or rolls back if either throws.
    func transaction<First, T>(beginning: (PostgresConnection) throws -> First, _ body: (First) throws -> T) throws -> T {
        do {
            let value = try body(try beginning(self))
            try execute("COMMIT")
            return value
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }

    /// Whether no transaction is open (libpq's transaction status is idle).
    var isIdle: Bool { tandem_PQtransactionStatus(handle) == PQTRANS_IDLE }

    /// The socket, for waiting on notifications with poll(2).
    var socket: Int32 { tandem_PQsocket(handle) }

    /// The process id of this connection's server process (`pg_backend_pid()`), which a
    /// notification names as its sender.
    var serverProcessID: Int32 { tandem_PQbackendPID(handle) }

    /// A notification: its sender's server process id, and whether its payload was empty.
    struct Notification: Equatable {
        var sender: Int32
        /// Tandem's: an empty payload (a server set up by an older Tandem) or `tandem:<xid>`.
        var isTandems: Bool
        /// The notifying transaction's id, when the payload names it.
        var transaction: UInt64?

        init(sender: Int32, payload: String) {
            self.sender = sender
            let xid = payload.hasPrefix("tandem:") ? UInt64(payload.dropFirst("tandem:".count)) : nil
            isTandems = payload.isEmpty || xid != nil
            transaction = xid
        }
    }

    /// Reads what arrived on the socket; returns the notifications, those libpq had already
    /// read with an earlier answer included (poll(2) does not see them).
    ///
    /// Related documentation: https://www.postgresql.org/docs/15/libpq-notify.html
    func consumeNotifications() throws -> [Notification] {
        guard tandem_PQconsumeInput(handle) == 1 else { throw failure(sql: nil, result: nil) }
        var notifications: [Notification] = []
        while let notification = tandem_PQnotifies(handle) {
            let payload = notification.pointee.extra.map { String(cString: $0) } ?? ""
            notifications.append(Notification(sender: notification.pointee.be_pid, payload: payload))
            tandem_PQfreemem(notification)
        }
        return notifications
    }

    /// True when the connection is lost, or left in a state it cannot be used in (a pipeline
    /// that could not be ended): the backend then opens another.
    var isBroken: Bool { tandem_PQstatus(handle) != CONNECTION_OK || isUnusable }
    /// Set when a pipeline could not be ended (see ``pipeline(_:)``).
    var isUnusable = false

    func failure(sql: String?, result: OpaquePointer?) -> PostgresError {
        let message = String(cString: tandem_PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
        let state = result.flatMap { tandem_PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) }
        let detail = result.flatMap { tandem_PQresultErrorField($0, Int32(UInt8(ascii: "D"))) }.map { String(cString: $0) }
        return PostgresError(
            "\(secrets.redact(message))\(sql.map { " - while executing `\($0.prefix(200))`" } ?? "") (\(safeName))",
            sqlState: state, isConnectionFailure: tandem_PQstatus(handle) != CONNECTION_OK, detail: detail)
    }

    func withParameters<T>(_ parameters: [String?], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
        let copies = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        return body(copies.map { $0.map { UnsafePointer($0) } })
    }
}

/// A PostgreSQL failure, with the SQLSTATE when the server sent one.
public struct PostgresError: Error, CustomStringConvertible, LocalizedError, Sendable, BackendConnectionError, Remediable {
    public let message: String
    /// The SQLSTATE code (`23505` unique violation, `22P02` invalid text representation, …).
    public let sqlState: String?
    /// The connection was lost or could not be made; sync retries with backoff.
    public let isConnectionFailure: Bool
    /// The server's detail line, when it sent one (Tandem's own refusals carry a value there).
    let detail: String?
    /// What fixes it, when Tandem knows: most often setting the server up with the schema.
    public let remedy: Remedy?

    init(_ message: String, sqlState: String? = nil, isConnectionFailure: Bool = false, detail: String? = nil, remedy: Remedy? = nil) {
        self.message = message
        self.remedy = remedy
        self.sqlState = sqlState
        self.isConnectionFailure = isConnectionFailure
        self.detail = detail
    }

    /// True for failures that retrying cannot fix, told by the SQLSTATE's class: data exceptions
    /// (22), integrity constraints (23), syntax and access (42: a column or table that is not
    /// there, a missing privilege, a row-level security policy) and WITH CHECK OPTION (44).
    /// Connection failures (08), serialization failures and deadlocks (40), resources (53),
    /// locks (55), operator intervention (57) and system errors (58, XX) are transient.
    ///
    /// Related documentation: https://www.postgresql.org/docs/15/errcodes-appendix.html
    public var isPermanent: Bool {
        guard !isConnectionFailure, let state = sqlState, state.count == 5 else { return false }
        return ["22", "23", "42", "44"].contains(String(state.prefix(2)))
    }

    public var description: String { "PostgreSQL: \(message)" }
    public var errorDescription: String? { description }
}
