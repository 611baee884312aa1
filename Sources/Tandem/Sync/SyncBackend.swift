import Foundation

/// A server that the owner process syncs with.
///
/// Methods are blocking and are called from the sync engine's own threads; implementations must
/// be safe to call from two threads at once (uploads/fetches on one, ``waitForChanges(after:timeout:)`` on another).
public protocol SyncBackend: Sendable {
    /// A stable identifier of the backend's data set. A client database records the first
    /// backend it syncs with and refuses any other, because its download cursor and its
    /// uploaded transaction ids belong to that one.
    var identifier: String { get }

    /// Applies local write transactions in order. Idempotent per (client id, transaction id): a
    /// transaction already applied is skipped, so a retry after a crash has no second effect.
    /// - Parameter epoch: the uploading owner's epoch (fencing token).
    /// - Throws: ``TandemError/staleEpoch(held:current:)`` when the backend has seen a newer epoch
    ///   for this client; any error for a failure to retry later.
    func upload(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws

    /// Changes after `cursor` (`""` for the beginning), oldest first, at most about `limit`
    /// changes; a server transaction is never split across batches.
    func fetchChanges(after cursor: String, limit: Int) throws -> ChangeBatch

    /// Blocks until the backend holds changes after `cursor`, or `timeout` seconds pass.
    /// - Returns: a cursor at or after the newest change now known (so the next wait can start
    ///   from it), or nil on timeout.
    func waitForChanges(after cursor: String, timeout: Double) throws -> String?

    /// Ends pending ``waitForChanges(after:timeout:)`` calls early. The backend stays usable.
    func close()
}

/// One row change from the backend: the row's full state after a server transaction, or its deletion.
public struct ServerChange: Sendable, Hashable, Codable {
    /// PUT carries the row's whole state; DELETE removes it.
    public enum Operation: String, Sendable, Codable { case put = "PUT", delete = "DELETE" }
    /// What happened to the row.
    public let op: Operation
    /// The table's schema name (`notes`).
    public let table: String
    /// The row's id.
    public let rowID: String
    /// The row's columns as a JSON object text (PUT only).
    public let data: String?

    /// A change; `data` is a JSON object text for PUT and nil for DELETE.
    public init(op: Operation, table: String, rowID: String, data: String?) {
        self.op = op
        self.table = table
        self.rowID = rowID
        self.data = data
    }
}

/// A batch of changes and the cursor after it.
public struct ChangeBatch: Sendable, Hashable {
    /// The changes, oldest first, whole server transactions only.
    public let changes: [ServerChange]
    /// The cursor to store once the batch is applied.
    public let nextCursor: String
    /// True when more changes follow right away.
    public let hasMore: Bool

    /// A batch and the cursor after it.
    public init(changes: [ServerChange], nextCursor: String, hasMore: Bool) {
        self.changes = changes
        self.nextCursor = nextCursor
        self.hasMore = hasMore
    }
}

/// A parsed backend URL.
///
/// - `sqlite:PATH` (or `sqlite://PATH`): the embedded backend, a server database file. A
///   relative PATH is taken from the current directory and kept as an absolute path.
///   `?busy_timeout_ms=N` sets the server file's busy timeout (default 5000 ms).
public enum BackendURL: Sendable, Equatable {
    /// The embedded backend: the server file's absolute path and its busy timeout, if given.
    case embedded(path: String, busyTimeoutMilliseconds: Int32?)

    /// Parses `url`; a relative path is resolved against the current directory.
    /// - Throws: ``TandemError/invalidBackend(_:)`` for an unknown scheme or option, or no path.
    public init(_ url: String) throws {
        try self.init(url, relativeTo: FileManager.default.currentDirectoryPath)
    }

    /// Parses `url`; a relative path is resolved against `directory`.
    /// - Throws: ``TandemError/invalidBackend(_:)`` for an unknown scheme or option, or no path.
    public init(_ url: String, relativeTo directory: String) throws {
        guard url.hasPrefix("sqlite:") else {
            guard let colon = url.firstIndex(of: ":") else {
                throw TandemError.invalidBackend("'\(url)' is not a backend URL (use sqlite:PATH)")
            }
            throw TandemError.invalidBackend("unknown backend scheme '\(url[..<colon])' in '\(url)' (supported: sqlite:PATH)")
        }
        var path = String(url.dropFirst("sqlite:".count))
        if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
        var busyTimeout: Int32?
        if let question = path.firstIndex(of: "?") {
            let query = path[path.index(after: question)...]
            path = String(path[..<question])
            for item in query.split(separator: "&") {
                let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                guard pair[0] == "busy_timeout_ms" else {
                    throw TandemError.invalidBackend("unknown option '\(pair[0])' in '\(url)' (supported: busy_timeout_ms=N)")
                }
                guard pair.count == 2, let ms = Int32(pair[1]), ms >= 0 else {
                    throw TandemError.invalidBackend("busy_timeout_ms takes a whole number of milliseconds, not '\(pair.count == 2 ? pair[1] : "")' in '\(url)'")
                }
                busyTimeout = ms
            }
        }
        guard !path.isEmpty else { throw TandemError.invalidBackend("'\(url)' names no file (use sqlite:/path/server.db)") }
        let base = URL(fileURLWithPath: directory, isDirectory: true)
        let absolute = (path.hasPrefix("/") ? URL(fileURLWithPath: path) : URL(fileURLWithPath: path, relativeTo: base)).standardizedFileURL.path
        self = .embedded(path: absolute, busyTimeoutMilliseconds: busyTimeout)
    }

    /// The backend as a client database records it: `sqlite:` and the absolute path, without options.
    public var name: String {
        switch self {
        case .embedded(let path, _): return "sqlite:" + path
        }
    }
}

/// Opens a backend from a URL (see ``BackendURL``); a relative path is taken from the current directory.
/// - Throws: ``TandemError/invalidBackend(_:)`` for an unknown scheme, a bad option or a missing directory.
public func openBackend(url: String) throws -> any SyncBackend {
    try openBackend(BackendURL(url))
}

/// Opens the backend `url` names.
/// - Throws: ``TandemError/invalidBackend(_:)`` for a missing directory, a directory or a file
///   that is not a backend.
public func openBackend(_ url: BackendURL) throws -> any SyncBackend {
    switch url {
    case .embedded(let path, let busyTimeout):
        var configuration = Configuration()
        if let busyTimeout { configuration.busyTimeoutMilliseconds = busyTimeout }
        return try EmbeddedBackend(path: path, configuration: configuration)
    }
}
