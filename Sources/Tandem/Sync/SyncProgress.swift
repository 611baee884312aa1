import Foundation
import Synchronization

/// How a backlog is draining, reported by the owner about once a second while it uploads or
/// downloads for longer than that (``SyncEvent/progress(_:)``).
public struct SyncProgress: Sendable, Hashable, CustomStringConvertible {
    /// CRUD entries uploaded since the backlog began.
    public var uploadedEntries: Int
    /// CRUD entries still queued.
    public var pendingEntries: Int
    /// Backend changes applied since the backlog began.
    public var downloadedChanges: Int
    /// The time since the backlog began.
    public var elapsed: Duration

    public init(uploadedEntries: Int, pendingEntries: Int, downloadedChanges: Int, elapsed: Duration) {
        self.uploadedEntries = uploadedEntries
        self.pendingEntries = pendingEntries
        self.downloadedChanges = downloadedChanges
        self.elapsed = elapsed
    }

    public var description: String {
        let seconds = elapsed.seconds
        let rate = seconds > 0 ? Double(uploadedEntries) / seconds : 0
        return "uploaded \(uploadedEntries) entr\(uploadedEntries == 1 ? "y" : "ies") (\(Int(rate.rounded()))/s), \(pendingEntries) still queued, "
            + "downloaded \(downloadedChanges) change\(downloadedChanges == 1 ? "" : "s") in \(String(format: "%.1f", seconds)) s"
    }
}

/// The owner's view of its lag and of a draining backlog: when it first saw the entries still
/// queued (each commit to the queue wakes it) and the backend changes not yet applied (the
/// backend announces them), and the counts for ``SyncProgress``.
final class SyncLagTracker: Sendable {
    typealias Instant = ContinuousClock.Instant

    private struct State {
        /// (highest queued entry id seen, when first seen), oldest first.
        var queued: [(id: Int64, at: Instant)] = []
        /// When the backend announced changes not applied since, oldest first (an announcement
        /// during a download is not covered by it, whatever came before it).
        var announcements: [Instant] = []
        /// The current busy stretch: when it began, totals, and the last progress report.
        var stretch: (began: Instant, uploaded: Int, downloaded: Int, reported: Instant)?
    }

    private let state = Mutex(State())

    /// The queue holds entries up to `id` now.
    func queued(through id: Int64, at now: Instant) {
        state.withLock { s in
            if let last = s.queued.last, last.id >= id { return }
            s.queued.append((id, now))
        }
    }

    /// The backend announced changes.
    func announced(at now: Instant) {
        state.withLock { s in
            // One per wait of the backend's; a few at most between two downloads.
            if s.announcements.count >= 64 { s.announcements.removeFirst() }
            s.announcements.append(now)
        }
    }

    /// When the entry `first` (the queue's head) was first seen, dropping older records.
    func pendingSince(head first: Int64?) -> Instant? {
        state.withLock { s in
            guard let first else { s.queued.removeAll(); return nil }
            while s.queued.count > 1, s.queued[1].id < first { s.queued.removeFirst() }
            return s.queued.first { $0.id >= first }?.at
        }
    }

    /// When changes were announced that a download after `start` has not applied yet; nil when
    /// the download that began at `start` applied everything announced before it (an
    /// announcement is made after the backend looked). A nil `start`: no download ran.
    func downloadPending(appliedFrom start: Instant?) -> Instant? {
        state.withLock { s in
            if let start { s.announcements.removeAll { $0 <= start } }
            return s.announcements.first
        }
    }

    /// Counts a pass that began at `began`; returns a progress report when a stretch of passes
    /// with work (the first one's start on) has lasted `interval` seconds since the last report,
    /// or since it began.
    func passed(
        began: Instant, uploaded: Int, downloaded: Int, pending: () throws -> Int, busy: Bool, interval: Duration,
        at now: Instant
    ) rethrows -> SyncProgress? {
        let due = state.withLock { s -> (Instant, Int, Int)? in
            if s.stretch == nil, uploaded + downloaded > 0 || busy { s.stretch = (began, 0, 0, began) }
            guard var stretch = s.stretch else { return nil }
            stretch.uploaded += uploaded
            stretch.downloaded += downloaded
            defer { s.stretch = busy ? stretch : nil }
            guard stretch.reported.duration(to: now) >= interval else { return nil }
            stretch.reported = now
            return (stretch.began, stretch.uploaded, stretch.downloaded)
        }
        guard let (start, up, down) = due else { return nil }
        return SyncProgress(
            uploadedEntries: up, pendingEntries: try pending(), downloadedChanges: down,
            elapsed: max(.zero, start.duration(to: now)))
    }
}
