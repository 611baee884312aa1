import Foundation
import Tandem

/// Push: the wait for changes listens on the backend's one connection, which it holds only to
/// listen, look at the feed and read notifications; between those it waits in poll(2) on the
/// connection's socket without holding it, so uploads and downloads go on meanwhile.
extension PostgresBackend {
    /// How a turn on the connection ends (``FeedWait``'s answer).
    private enum TurnEnd {
        case changes(String), timedOut
        /// Poll the socket (`-1`: none, not listening) of `listened`, held so that the socket
        /// stays open while poll(2) waits on it.
        case poll(Duration, socket: Int32, listened: PostgresConnection?)
    }

    /// Waits on `LISTEN`, looking at the feed's position only when it must (``FeedWait``). A
    /// change this backend uploaded itself wakes no wait: the owner downloads its uploads'
    /// answers itself (``SyncEngine``'s deferral of its own uploads' answers).
    public func waitForChanges(after cursor: String, timeout: Duration) throws -> String? {
        // One wait at a time: a wait a stop missed, ending within the look interval, and the
        // next owner's on the same backend never overlap.
        try feedWait.withLock { wait throws -> String? in
            let deadline = ContinuousClock.now + timeout
            interrupts.drain()  // a new wait starts uninterrupted
            wait.begin(after: cursor)
            let settled = PostgresCursor(cursor).flatMap { $0.target == nil && $0.table == nil ? $0.settled : nil }
            while true {
                let end = try withConnection { db, link -> TurnEnd in
                    if !link.listenWanted {
                        link.listenWanted = true
                        listen(on: db, &link)
                    }
                    // Changes of transactions the cursor holds already (read late, with a
                    // statement's answer, after a look or a download that saw them) announce nothing.
                    let announced = Announcement.covers(settled, link.newsTransactions) ? .nothing : link.news
                    link.news = .nothing
                    link.newsTransactions = []
                    let listening = link.listening
                    var action = wait.turn(.init(generation: link.generation, listening: listening, announced: announced), at: .now)
                    if action == .look {
                        // Notifications already here are of commits the position below sees.
                        _ = try db.consumeNotifications()
                        let stored = PostgresCursor(cursor)
                        let settled = stored.flatMap { $0.target == nil && $0.table == nil ? $0.settled : nil }
                        let position = try PostgresFeed.position(on: db, name: name, after: settled)
                        let hasWork =
                            settled == nil || !position.historyIsCurrent || position.hasChanges
                            || PostgresFeed.fullSyncReason(for: stored, text: cursor, at: position) != nil
                        action = wait.looked(.init(scoped: position.scoped, hasWork: hasWork, settledCursor: position.settledCursor.text), listening: listening)
                    }
                    if case .changes(let next) = action { return .changes(next) }
                    // Notifications read with the position's answer wait in libpq, where poll(2) does not see them.
                    let read = listening ? try db.consumeNotifications() : []
                    let found = Announcement.covers(settled, transactions(read, on: db)) ? .nothing : announcement(read, on: db)
                    let now = ContinuousClock.now
                    switch wait.read(found, remaining: now.duration(to: deadline), listening: listening, at: now) {
                    case .changes(let next): return .changes(next)
                    case .poll(let timeout): return .poll(timeout, socket: listening ? db.socket : -1, listened: listening ? db : nil)
                    case .timedOut, .look, .readNotifications: return .timedOut
                    }
                }
                switch end {
                case .changes(let next): return next
                case .timedOut:
                    flushAcknowledgements()
                    return nil
                case .poll(let timeout, let socket, let listened):
                    var fds = [
                        pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                        pollfd(fd: interrupts.readFD, events: Int16(POLLIN), revents: 0),
                        pollfd(fd: wakeups.readFD, events: Int16(POLLIN), revents: 0),
                    ]
                    let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
                    // The connection is held so that its socket stays open while poll(2) waits on it.
                    let n = withExtendedLifetime(listened) { poll(&fds, 3, milliseconds) }
                    if n > 0 && fds[1].revents != 0 { return nil }
                    if n > 0 && fds[2].revents != 0 { wakeups.drain() }
                // A readable socket: its notifications are read on the next turn (statements that
                // hold the connection meanwhile hand theirs over through `news`).
                }
            }
        }
    }

    /// Listens on `db`, the connection of `link`; ``Link/listening`` says whether it could.
    func listen(on db: PostgresConnection, _ link: inout Link) {
        link.listening = (try? db.execute("LISTEN \(PostgresSetup.channel)")) != nil
    }

    /// What notifications on Tandem's channel announce, the strongest first.
    enum Announcement: Comparable {
        /// None from another session.
        case nothing
        /// Another session notified with a payload: not Tandem's, so the wait looks.
        case something
        /// Another session changed synced rows or grants (Tandem's triggers notify with an
        /// empty payload).
        case change
    }

    /// What `notifications`, read on `db`, announce: only those sent by another server process
    /// than `db`'s count (a notification names its sender; `db` is the connection uploads use,
    /// and a process id names one live server process), so this backend's own uploads
    /// announce nothing.
    func announcement(_ notifications: [PostgresConnection.Notification], on db: PostgresConnection) -> Announcement {
        notifications.lazy.filter { $0.sender != db.serverProcessID }.map { $0.isTandems ? .change : .something }.max() ?? .nothing
    }

    /// The transactions `notifications` of Tandem's from other sessions name; nil when one names
    /// none or another application's came too (the wait then takes them as they are).
    func transactions(_ notifications: [PostgresConnection.Notification], on db: PostgresConnection) -> [UInt64]? {
        var transactions: [UInt64] = []
        for notification in notifications where notification.sender != db.serverProcessID {
            guard notification.isTandems, let xid = notification.transaction else { return nil }
            transactions.append(xid)
        }
        return transactions
    }

    public func interruptWaits() {
        interrupts.poke()
    }
}

extension PostgresBackend.Announcement {
    /// Whether every transaction of `transactions` (some) is visible in `snapshot`: a cursor
    /// settled at it holds their changes already.
    static func covers(_ snapshot: PostgresSnapshot?, _ transactions: [UInt64]?) -> Bool {
        guard let snapshot, let transactions, !transactions.isEmpty else { return false }
        return transactions.allSatisfy { $0 < snapshot.xmin || ($0 < snapshot.xmax && !snapshot.inProgress.contains($0)) }
    }

    /// `known` and `more` together, nil when either is unknown; at most 256 (more: unknown).
    static func merged(_ known: [UInt64]?, _ more: [UInt64]?) -> [UInt64]? {
        guard let known, let more, known.count + more.count <= 256 else { return nil }
        return known + more
    }
}
