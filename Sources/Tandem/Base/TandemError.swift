import Foundation

/// Errors Tandem throws besides ``SQLiteError`` and ``SystemError``.
/// Each message names the file, table, column or SQL at fault.
public enum TandemError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError, Remediable {
    /// The database could not be opened: missing directory, not a database, corrupt, or locked past the deadline.
    case cannotOpen(path: String, reason: String)
    /// A write was attempted on a database opened read-only.
    case readOnly(path: String)
    /// The schema is invalid or does not match the file: the kind of problem, the table and
    /// column at fault, and the message (``SchemaProblem``).
    case invalidSchema(SchemaProblem)
    /// The SQL could not be used as asked.
    case invalidSQL(sql: String, reason: String)
    /// Arguments do not match the SQL's parameters.
    case invalidArguments(String)
    /// A value its column refuses (a NaN, an infinite real, a BLOB, a value that does not convert
    /// to the column's type), or a stored value that does not read as its property's type:
    /// table, column and row as fields (``ValueRefusal``).
    case invalidValue(ValueRefusal)
    /// Text that should be JSON is not, or not of the expected shape.
    case invalidJSON(String)
    /// A record type or value does not fit its table (message names the type, property and column).
    case invalidRecord(String)
    /// The database has no Tandem schema yet (it was never initialised).
    case notInitialized(path: String)
    /// A sync write found a newer epoch: this process is no longer the owner.
    case staleEpoch(held: Int64, current: Int64)
    /// Another process owns sync.
    case notOwner(path: String, ownerPID: Int32?)
    /// A JSON payload to import is JSON, but does not fit the table: an element that is not an
    /// object or has no id, a key no column takes, a value its column cannot store exactly. The
    /// message names the element (`[3]`, `[3] (line 4)`) and the key.
    case invalidPayload(String)
    /// A backend URL or response is unusable.
    case invalidBackend(String)
    /// A verification against the backend could not be made (the reason says why: a client that
    /// never synced, a backend that cannot verify, a missing libcrypto); nothing was changed.
    case verificationFailed(String)
    /// The backend already applied different entries under this (client id, transaction id):
    /// the client file was restored from a backup or copied. `highest` is the highest
    /// transaction id the backend has applied for the client; the sync engine renumbers its
    /// queue past it and uploads again.
    case transactionConflict(clientID: String, transactionID: Int64, highest: Int64)
    /// The backend cannot apply an upload (a value the column's type cannot take, say): sync
    /// sets the transaction aside (``UploadQueue/rejected()``). `reason` names the column and value.
    case uploadRejected(table: String, rowID: String, reason: String)
    /// The API was used in a way it cannot work: a write transaction started inside another
    /// on the same thread (it would wait for itself forever), say. The message says what to do
    /// instead.
    case misuse(String)
    /// Tandem's layout in the file is damaged in ways that cannot be repaired without losing
    /// data (see ``SharedDatabase/repairLayout(storedRows:)``); `problems` names each.
    case damagedLayout(path: String, problems: [String])
    /// Other processes have the file open, so it cannot be replaced (a restore): `users` names
    /// each (`process 1234 (tandem watch app.db)`).
    case inUse(path: String, users: [String])
    /// The file's schema version (how many ``Migration``s it applied, the last one `lastMigration`)
    /// is past this program's (`programVersion`, the length of its declared list): a newer program
    /// migrated it, before this one opened it or while this one had it open. This program does
    /// not write to it: its tables no longer have the shape it declares.
    case schemaMigrated(path: String, fileVersion: Int, lastMigration: String, programVersion: Int)
    /// A migration failed; nothing it did is kept and the file stays at its version. `step` is
    /// the step in words, `reason` what went wrong (naming the row where one was at fault).
    case migrationFailed(migration: String, step: String, reason: String)
    /// A search query that cannot run (``SearchSyntax``): `position` is the character (1 for
    /// the first) where it goes wrong, nil when the fault is the whole query; `reason` says what.
    case invalidSearchQuery(position: Int?, reason: String)
    /// A wait for writes to be synced (``DatabaseSync/waitUntilSynced(_:timeout:)``) ran out:
    /// the writes through CRUD entry `entry` were not yet uploaded (the backend has applied
    /// through `uploadedThrough`) or not yet in a download applied since (`syncedThrough`).
    case notSynced(path: String, entry: Int64, uploadedThrough: Int64, syncedThrough: Int64)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): return "cannot open database '\(path)': \(reason)"
        case .readOnly(let path): return "the database '\(path)' was opened read-only; writes are not allowed"
        case .invalidSchema(let problem): return "invalid schema: \(problem.message)"
        case .invalidSQL(let sql, let reason): return "invalid SQL `\(sql)`: \(reason)"
        case .invalidArguments(let m): return "invalid arguments: \(m)"
        case .invalidValue(let refusal): return "invalid value: \(refusal.message)"
        case .misuse(let m): return "misuse of Tandem's API: \(m)"
        case .invalidJSON(let m): return "invalid JSON: \(m)"
        case .invalidPayload(let m): return "cannot import the payload: \(m)"
        case .invalidRecord(let m): return "invalid record: \(m)"
        case .notInitialized(let path): return "'\(path)' has no Tandem schema; give it one with \(Remedy.storeSchema.apiTerms)"
        case .staleEpoch(let held, let current): return "stale owner epoch \(held): the current epoch is \(current); another process owns sync now"
        case .notOwner(let path, let pid):
            return "another process\(pid.map { " (pid \($0))" } ?? "") owns sync for '\(path)' (stop its sync with \(Remedy.stopSyncOwner.apiTerms) first)"
        case .invalidBackend(let m): return "invalid backend: \(m)"
        case .verificationFailed(let m): return "cannot verify: \(m)"
        case .schemaMigrated(let path, let file, let last, let program):
            return
                "'\(path)' is at schema version \(file) (last migration '\(last)'), past this program's version \(program): a newer program migrated it, so this one does not write to it; open it with the newer schema"
        case .notSynced(let path, let entry, let uploaded, let synced):
            let stage =
                uploaded < entry
                ? "not yet uploaded (the backend has applied through entry \(uploaded))"
                : "uploaded, not yet in a download applied since (downloads took in uploads through entry \(synced))"
            return "the writes to '\(path)' through upload queue entry \(entry) are \(stage) when the wait ran out; is a process syncing it (SyncStatus.ownerPID)?"
        case .invalidSearchQuery(let position, let reason):
            return "invalid search query: \(reason)" + (position.map { " (at character \($0))" } ?? "")
        case .migrationFailed(let migration, let step, let reason):
            return "migration '\(migration)' failed at step '\(step)': \(reason); nothing was changed and the file stays at its schema version"
        case .inUse(let path, let users):
            return "'\(path)' is open in \(users.joined(separator: ", ")): a file in use cannot be replaced safely; close it there first"
        case .damagedLayout(let path, let problems):
            return "'\(path)' is damaged in ways Tandem cannot repair safely: \(problems.joined(separator: "; "))"
        case .uploadRejected(let table, let rowID, let reason):
            return "the backend rejected the upload of \(table) row '\(rowID)': \(reason)"
        case .transactionConflict(let client, let tx, let highest):
            return
                "the backend already applied different entries as transaction \(tx) of client \(client) (the client database was restored from a backup or copied); queued transactions are renumbered after \(highest)"
        }
    }

    /// The same text as ``description``, for `localizedDescription`.
    /// The remedy of the errors that have one whatever their details: a file with no schema
    /// (``Remedy/storeSchema``) and a process that owns sync (``Remedy/stopSyncOwner``).
    public var remedy: Remedy? {
        switch self {
        case .notInitialized: .storeSchema
        case .notOwner: .stopSyncOwner
        default: nil
        }
    }

    public var errorDescription: String? { description }

    /// The table the error is about, by its schema name: a refused value's, or a rejected upload's.
    public var table: String? {
        switch self {
        case .invalidValue(let refusal): return refusal.table
        case .invalidSchema(let problem): return problem.table
        case .uploadRejected(let table, _, _): return table
        default: return nil
        }
    }

    /// The column a refused value was for.
    public var column: String? {
        switch self {
        case .invalidValue(let refusal): return refusal.column
        case .invalidSchema(let problem): return problem.column
        default: return nil
        }
    }

    /// The row the error is about, by its id: a refused value's (when known), or a rejected upload's.
    public var rowID: String? {
        switch self {
        case .invalidValue(let refusal): return refusal.rowID
        case .invalidSchema(let problem): return problem.row
        case .uploadRejected(_, let rowID, _): return rowID
        default: return nil
        }
    }
}
