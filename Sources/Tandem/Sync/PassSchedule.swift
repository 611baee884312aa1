/// When the owner's passes download: the decisions of ``SyncEngine``'s schedule, as a value that
/// does no I/O and reads no clock. The engine tells it what happened (a pass began, the backend
/// answered or announced changes, a pass ended), each with the monotonic instant it read, and
/// carries out what it answers.
///
/// Downloading costs the uploads it stops for its length, and while only the answers to this
/// owner's own uploads can be waiting (the backend has announced nothing since the last
/// download began: a backend's waiter is not woken by its own client's uploads) they change no
/// row unless the server changed it on the way in. So a pass may leave its download to a later
/// one (``afterUploads(at:moreQueued:)``):
/// - when the pass left the queue empty, for ``ownAnswersGathering`` after the last download
///   began: the pass that downloads runs when that time is up, unless a wake-up comes first
///   (``passEnded(at:pass:)`` says when);
/// - when more is queued, for ``ownAnswersDeferral`` after the last download began, and on
///   while the backlog queued then is still uploading (the queue's head is within it): a backlog
///   has its answers once it has gone up, a writer that keeps the queue full at least every
///   second or every backlog's upload;
/// - before the first download of a client that has never synced, while the backlog it began
///   with is still uploading: the first download, whose reading of the queued rows costs as
///   much as the queue is long, comes when the queue is short, as PowerSync's client advances
///   to no new checkpoint while its upload queue holds changes
///   (https://docs.powersync.com/architecture/consistency). A client that has synced before
///   downloads in its first pass what others did while no owner ran.
///
/// The answers come at once when anyone else changes something, and an upload after a quiet
/// stretch gets its answer in its own pass.
struct PassSchedule: Equatable, Sendable {
    typealias Instant = ContinuousClock.Instant

    /// How long a backlog's uploads go on without a download at least while the backend
    /// announces nothing. A writer that keeps the queue full gets its answers about this often;
    /// each of their downloads stops its uploads for its length (at 5 s, about 40,000 answers at
    /// once held a saturating writer's rows from PostgreSQL clients for up to 0.3 s; at 1 s,
    /// 0.17 s).
    static let ownAnswersDeferral = Duration.seconds(1)

    /// How long the answers to uploads that emptied the queue may wait after the last download
    /// began. A writer that commits every few milliseconds gets its answers in one download
    /// about this often, where each upload's own download ran beside the download of every other
    /// client of the same change, on the server and on the host (at 50 commits/s through
    /// PostgreSQL, a quarter of the owner's CPU).
    static let ownAnswersGathering = Duration.milliseconds(100)

    /// The last download: when the pass that ran it began (nil: before the first download of a
    /// client that has never synced) and the last entry queued then (nil: none).
    struct LastDownload: Equatable, Sendable {
        var began: Instant?
        var backlogThrough: Int64?
    }

    /// What a pass does once its uploads are done.
    enum Download: Equatable, Sendable {
        /// Download now.
        case now
        /// Leave the download to a later pass.
        case leave
        /// Leave it while the queue's head is at or before this entry (a backlog still
        /// uploading), else download now: the engine reads the head only then.
        case leaveWhileHeadWithin(Int64)

        /// Whether the pass downloads now, given the queue's head (read only when needed; nil:
        /// the queue is empty).
        func downloads(queueHead: () throws -> Int64?) rethrows -> Bool {
            switch self {
            case .now: return true
            case .leave: return false
            case .leaveWhileHeadWithin(let through): return try queueHead().map { $0 > through } ?? true
            }
        }
    }

    /// Whether the client had never synced when the owner began.
    let neverSynced: Bool
    /// Nil before the first pass began.
    private(set) var lastDownload: LastDownload?
    /// When the backend's waiter first answered a cursorless wait: for a client that has never
    /// downloaded it always answers (a first sync is due), which announces nothing anyone did;
    /// later announcements do.
    private(set) var firstSyncDue: Instant?
    /// When the backend announced changes no download has applied since, oldest first (a
    /// download applies what was announced before it began; one announced during it stays).
    private(set) var announcements: [Instant] = []

    /// Since when changes announced have waited for a download (the status's
    /// `download_pending_since`); nil: none waits.
    var downloadPendingSince: Instant? { announcements.first }
    /// When the pass under way began, and the last entry queued then.
    private var current: PassUnderWay?

    private struct PassUnderWay: Equatable, Sendable {
        var began: Instant
        var lastQueued: Int64?
    }
    /// Whether a pass has ended.
    private(set) var passHasEnded = false
    /// Whether a pass uploaded since the last download began: answers are owed. A pass that
    /// uploads nothing (woken by another process's commit of a table the queue does not hold)
    /// fetches nothing unless they are, or the backend announced changes.
    private(set) var answersOwed = false

    init(neverSynced: Bool) {
        self.neverSynced = neverSynced
    }

    /// A pass begins at `now` with the queue holding entries up to `lastQueued` (nil: empty).
    mutating func passBegan(at now: Instant, lastQueued: Int64?) {
        current = PassUnderWay(began: now, lastQueued: lastQueued)
        // The first pass: the backlog it begins with, for a client that has never synced.
        if lastDownload == nil { lastDownload = LastDownload(began: nil, backlogThrough: neverSynced ? lastQueued : nil) }
    }

    /// The backend's waiter answered a wait from no cursor at `now` (a first sync is due).
    mutating func firstSyncAnswered(at now: Instant) {
        if firstSyncDue == nil { firstSyncDue = now }
    }

    /// The backend announced changes at `now`.
    mutating func announced(at now: Instant) {
        // One per wait of the backend's; a few at most between two downloads.
        if announcements.count >= 64 { announcements.removeFirst() }
        announcements.append(now)
    }

    /// Whether the pass under way downloads after its uploads, with `moreQueued` saying whether
    /// entries remain queued and `uploaded` whether the pass uploaded any.
    func afterUploads(at now: Instant, moreQueued: Bool, uploaded: Bool) -> Download {
        guard let last = lastDownload else { return .now }
        // Before the first download, the first sync's answer is no news.
        let since = last.began == nil ? firstSyncDue : nil
        if let newest = announcements.last, since.map({ newest > $0 }) ?? true { return .now }
        // After a download, nothing uploaded and nothing announced since: nothing to fetch.
        if last.began != nil, !moreQueued, !uploaded, !answersOwed { return .leave }
        if let began = last.began, began.duration(to: now) < (moreQueued ? Self.ownAnswersDeferral : Self.ownAnswersGathering) {
            return .leave
        }
        guard moreQueued, let through = last.backlogThrough else { return .now }
        return .leaveWhileHeadWithin(through)
    }

    /// What a pass did, as far as the schedule goes.
    struct PassOutcome: Equatable, Sendable {
        /// When its download began; nil: it left the download for later.
        var downloadBegan: Instant?
        /// Entries remain queued.
        var moreToUpload: Bool
        /// It uploaded entries.
        var uploaded = true
    }

    /// The pass under way failed: it may have uploaded entries before (their answers are owed).
    mutating func passFailed() {
        passHasEnded = true
        current = nil
        answersOwed = true
    }

    /// The pass under way ended at `now`; returns how long until the pass that downloads the
    /// answers it left is due (nil: none is, or more is queued and the next pass runs at once).
    mutating func passEnded(at now: Instant, pass: PassOutcome) -> Duration? {
        passHasEnded = true
        let began = current?.began
        defer { current = nil }
        if let downloaded = pass.downloadBegan {
            lastDownload = LastDownload(began: began ?? downloaded, backlogThrough: current?.lastQueued)
            announcements.removeAll { $0 <= downloaded }
            answersOwed = false
            return nil
        }
        if pass.uploaded { answersOwed = true }
        guard !pass.moreToUpload, answersOwed, let since = lastDownload?.began else { return nil }
        return max(.zero, Self.ownAnswersGathering - since.duration(to: now))
    }
}
