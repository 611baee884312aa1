import Foundation

/// Why a sync attempt failed, typed, in ``SyncStatus/lastFailure`` and ``SyncEvent/error(_:)``.
/// Sync retries by itself with capped backoff in every case but ``Kind/refusedEpoch``, where
/// this process steps down.
public struct SyncFailure: Sendable, Hashable, Codable, CustomStringConvertible, Remediable {
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The backend could not be reached or was busy (locked server file, lost connection).
        case backendUnavailable = "backend_unavailable"
        /// The backend or the local file has seen a newer owner epoch: another process owns sync.
        case refusedEpoch = "refused_epoch"
        /// The backend refused an upload it cannot apply (a value its column cannot take, say);
        /// the queue is kept.
        case rejectedUpload = "rejected_upload"
        /// What the backend sent, or what the queue holds, cannot be read.
        case badData = "bad_data"
        /// The local database failed (disk full, read-only, corrupt).
        case localDatabase = "local_database"
        /// Anything else.
        case other
    }

    public var kind: Kind
    /// A message for people, naming the file, table or row at fault.
    public var message: String
    /// The table and row an upload rejection is about, when known.
    public var table: String?
    public var rowID: String?
    /// What fixes it, when the error had a remedy (``Remediable``) or the failure is a set-aside
    /// upload (``Remedy/resolveRejectedUpload``); kept with the status, so `tandem status` says it.
    public var remedy: Remedy?

    public init(kind: Kind, message: String, table: String? = nil, rowID: String? = nil, remedy: Remedy? = nil) {
        self.kind = kind
        self.message = message
        self.table = table
        self.rowID = rowID
        self.remedy = remedy
    }

    /// Classifies an error thrown by a sync pass on `databasePath` (errors about any other file
    /// are the backend's).
    public init(_ error: any Error, databasePath: String) {
        defer { remedy = (error as? any Remediable)?.remedy }
        let message = "\(error)"
        switch error {
        case TandemError.staleEpoch:
            self.init(kind: .refusedEpoch, message: message)
        case TandemError.uploadRejected(let table, let rowID, _):
            self.init(kind: .rejectedUpload, message: message, table: table, rowID: rowID)
        case TandemError.invalidJSON, TandemError.invalidBackend:
            self.init(kind: .badData, message: message)
        case let error as SQLiteError:
            self.init(kind: error.path == databasePath ? .localDatabase : .backendUnavailable, message: message)
        case is SystemError:
            self.init(kind: .backendUnavailable, message: message)
        case let error as any BackendConnectionError where error.isConnectionFailure:
            self.init(kind: .backendUnavailable, message: message)
        default:
            self.init(kind: .other, message: message)
        }
    }

    public var description: String { message }

    private enum CodingKeys: String, CodingKey {
        case kind, message, table, rowID, remedy
    }

    /// Reads a failure as stored; a remedy this version does not know (a newer one wrote it)
    /// reads as none, so that the rest of the status is kept.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decode(Kind.self, forKey: .kind)
        message = try container.decode(String.self, forKey: .message)
        table = try container.decodeIfPresent(String.self, forKey: .table)
        rowID = try container.decodeIfPresent(String.self, forKey: .rowID)
        remedy = try? container.decodeIfPresent(Remedy.self, forKey: .remedy)
    }
}

/// An error of a backend's client library that can tell a lost or refused connection (sync
/// retries with backoff and reports ``SyncFailure/Kind/backendUnavailable``) from other failures.
public protocol BackendConnectionError: Error {
    var isConnectionFailure: Bool { get }
}
