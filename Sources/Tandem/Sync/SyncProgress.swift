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

/// The owner's view of its upload lag and of a draining backlog: when it first saw the entries
/// still queued (each commit to the queue wakes it), and the counts for ``SyncProgress``. (The
/// changes announced and not yet downloaded are its ``PassSchedule``'s.)
final class SyncLagTracker: Sendable {
    typealias Instant = ContinuousClock.Instant

    private struct State {
        /// (highest queued entry id seen, when first seen), oldest first.
        var queued: [(id: Int64, at: Instant)] = []
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

    /// When the entry `first` (the queue's head) was first seen, dropping older records.
    func pendingSince(head first: Int64?) -> Instant? {
        state.withLock { s in
            guard let first else { s.queued.removeAll(); return nil }
            while s.queued.count > 1, s.queued[1].id < first { s.queued.removeFirst() }
            return s.queued.first { $0.id >= first }?.at
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
