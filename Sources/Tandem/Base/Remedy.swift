/// A way out of an error that Tandem's messages suggest. A library message says it in the
/// library's terms (the API to call, ``apiTerms``); `tandem` says each one as its command
/// instead (TandemCLI's `CommandHints`), so the library names no command and the command line
/// no API.
public enum Remedy: String, CaseIterable, Sendable, Codable {
    /// Store a schema, or make a new client id: open the database with its schema.
    case storeSchema
    /// Set the PostgreSQL server up (or up to date) with the schema.
    case setUpServer
    /// Give a login role scopes and the privileges a client needs.
    case grantScopes
    /// Queue a set-aside transaction again, or drop it.
    case resolveRejectedUpload
    /// List the triggers and other objects Tandem did not make.
    case listLayoutProblems
    /// Stop the process that owns sync.
    case stopSyncOwner
    /// Wait longer for another process's write transaction.
    case longerBusyTimeout

    /// The remedy as a library message says it.
    public var apiTerms: String {
        switch self {
        case .storeSchema: "SharedDatabase(path:schema:)"
        case .setUpServer: "`PostgresBackend.setup(conninfo:schema:)`"
        case .grantScopes: "`PostgresBackend.grant(conninfo:role:scopes:)`"
        case .resolveRejectedUpload: "uploadQueue.retryRejected(transactionID:) or uploadQueue.discardRejected(transactionID:)"
        case .listLayoutProblems: "checkLayout()"
        case .stopSyncOwner: "its SyncSession's stop()"
        case .longerBusyTimeout: "a longer Configuration.busyTimeout"
        }
    }
}

/// An error, a finding or a failure that names its remedy as a field: a program can act on it
/// without reading the message, and the command line says it as a command even where the
/// message words it otherwise or not at all.
///
/// ``TandemError``, ``SQLiteError``, ``LayoutFinding`` and ``SyncFailure`` (kept in the sync
/// status, so the remedy outlives the process that met the failure) are remediable, and so is
/// TandemPostgres's `PostgresError`.
public protocol Remediable {
    /// What fixes it, or nil when Tandem knows of nothing.
    var remedy: Remedy? { get }
}
