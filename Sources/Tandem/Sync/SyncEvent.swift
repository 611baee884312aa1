/// What a running sync reports, in order, through ``SyncSession/events``.
public enum SyncEvent: Sendable, Hashable, CustomStringConvertible {
    /// This process took ownership with a new epoch.
    case becameOwner(epoch: Int64)
    /// Local transactions (and their CRUD entries) were accepted by the backend and removed from the queue.
    case uploaded(transactions: Int, entries: Int)
    /// Backend changes were applied locally.
    case downloaded(changes: Int)
    /// The backend sends every row again, for the reason given (a first sync, a server restored
    /// from a dump, a cursor behind its compacted change log): synced rows without pending
    /// uploads are replaced by the server's, pending uploads are kept and still sent.
    case fullSync(reason: String)
    /// A backlog is draining (about once a second while uploads or downloads run longer).
    case progress(SyncProgress)
    /// A failure, typed; sync retries by itself with capped backoff.
    case error(SyncFailure)
    /// Another process took over (the epoch moved on); this process stopped syncing.
    case lostOwnership(String)
    /// Changes are noticed by polling, not at once, for the reason given (inotify unavailable);
    /// said once, when sync starts. See ``SharedDatabase/changeWakeupUnavailableReason``.
    case pollingForChanges(String)
    /// A background verification (``SyncSession/verifyInBackground(every:)``) found that this
    /// client holds the server's rows (pending and in-flight rows aside).
    case verified(LastVerification)
    /// A background verification found rows that differ from the server's: drift, which a
    /// repair (``DatabaseSync/verify(with:repair:tables:)`` with `repair: true`) undoes.
    case driftFound(LastVerification)
    /// Sync stopped; ownership, if held, was released.
    case stopped

    public var description: String {
        switch self {
        case .becameOwner(let epoch): return "became owner (epoch \(epoch))"
        case .uploaded(let t, let e): return "uploaded \(t) transaction\(t == 1 ? "" : "s") (\(e) entr\(e == 1 ? "y" : "ies"))"
        case .downloaded(let n): return "downloaded \(n) change\(n == 1 ? "" : "s")"
        case .fullSync(let reason): return "full sync: \(reason)"
        case .progress(let p): return "progress: \(p)"
        case .error(let m): return "error: \(m)"
        case .lostOwnership(let m): return "lost ownership: \(m)"
        case .pollingForChanges(let reason): return "polling for changes: \(reason)"
        case .verified: return "verified: agrees with the server"
        case .driftFound(let v):
            return "drift found: \(v.differingRows) row\(v.differingRows == 1 ? "" : "s") differ from the server's (\(v.differingTables.joined(separator: ", ")))"
        case .stopped: return "stopped"
        }
    }
}
