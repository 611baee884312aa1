import Foundation
import Tandem

/// Push: the wait for changes listens on the backend's one connection, which it holds only to
/// listen, look at the feed and read notifications; between those it waits in poll(2) on the
/// connection's socket without holding it, so uploads and downloads go on meanwhile.
extension PostgresBackend {
    /// What a wait does after its turn on the connection.
    private enum Step {
        /// A pass has work to do from the stored cursor; the wait returns this cursor.
        case changes(String)
        /// Notifications announced news: look at once.
        case look
        /// Wait on the connection's socket, read under the lock (nil when not listening: poll
        /// every second). The connection is held so that its socket stays open while poll(2)
        /// waits on it.
        case poll(PostgresConnection?, socket: Int32)
    }

    /// Waits on `LISTEN`, looking at the feed's position only when it must: at the start of a
    /// wait after another cursor than the last one looked at, after a (re)connect, and at least
    /// every ``lookInterval``. A notification of Tandem's from another server process than this
    /// backend's own connection ends the wait at once, with `cursor`, for a client that sees
    /// every change (the pass that follows reads the position with its first page); a scoped
    /// client looks first, since another tenant's change wakes it too, and so does any client
    /// for a notification with a payload (not Tandem's). A change this backend uploaded itself
    /// wakes no wait: the owner downloads its uploads' answers itself (``SyncEngine``'s
    /// deferral of its own uploads' answers).
    public func waitForChanges(after cursor: String, timeout: Duration) throws -> String? {
        waiting.lock()
        defer { waiting.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout.seconds)
        interrupts.drain()  // a new wait starts uninterrupted
        var look = cursor != checkedCursor
        while true {
            let step = try withConnection { db -> Step in
                if !listenWanted {
                    listenWanted = true
                    listen(on: db)
                }
                if generation != checkedGeneration {
                    // Another connection: what was announced on the last one is lost.
                    checkedGeneration = generation
                    checkedCursor = nil
                    look = true
                }
                if let lastLook, lastLook.duration(to: .now) >= lookInterval { look = true }
                let settled = PostgresCursor(cursor).flatMap { $0.target == nil && $0.table == nil ? $0.settled : nil }
                // Changes of transactions the cursor holds already (read late, with a statement's
                // answer, after a look or a download that saw them) announce nothing.
                let announced = Announcement.covers(settled, newsTransactions) ? .nothing : news
                news = .nothing
                newsTransactions = []
                // A client that sees every change has work whenever another session changed
                // something: its pass reads the position anyway, so the wait does not look first.
                if announced == .change && !look && listening && seesEveryChange { return .changes(cursor) }
                if announced != .nothing { look = true }
                if look || !listening {
                    // After every (re)connect and wake-up, read from the cursor: notifications are
                    // wake-ups only. Those already here are of commits the position below sees.
                    checkedCursor = nil
                    lastLook = .now
                    _ = try db.consumeNotifications()
                    let stored = PostgresCursor(cursor)
                    let settled = stored.flatMap { $0.target == nil && $0.table == nil ? $0.settled : nil }
                    let position = try PostgresFeed.position(on: db, name: name, after: settled)
                    seesEveryChange = !position.scoped
                    if settled == nil || !position.historyIsCurrent || PostgresFeed.fullSyncReason(for: stored, text: cursor, at: position) != nil
                        || position.hasChanges
                    {
                        // The next wait starts from here.
                        checkedCursor = listening ? position.settledCursor.text : nil
                        return .changes(position.settledCursor.text)
                    }
                    checkedCursor = listening ? cursor : nil
                    look = false
                }
                // Notifications read with the position's answer wait in libpq, where poll(2) does not see them.
                let read = listening ? try db.consumeNotifications() : []
                let found = Announcement.covers(settled, transactions(read, on: db)) ? .nothing : announcement(read, on: db)
                switch found {
                case .change where seesEveryChange: return .changes(cursor)
                case .change, .something: return .look
                case .nothing: break
                }
                return listening ? .poll(db, socket: db.socket) : .poll(nil, socket: -1)
            }
            // A look due at once still ends at the deadline and on an interrupt (poll(2) below
            // does not wait then): news that keeps coming cannot hold a wait past either.
            let (listened, socket): (PostgresConnection?, Int32)
            switch step {
            case .changes(let next): return next
            case .look:
                look = true
                (listened, socket) = (nil, -1)
            case .poll(let connection, let fd): (listened, socket) = (connection, fd)
            }
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 {
                flushAcknowledgements()
                return nil
            }
            var fds = [
                pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                pollfd(fd: interrupts.readFD, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeups.readFD, events: Int16(POLLIN), revents: 0),
            ]
            let untilLook = lastLook.map { (lookInterval - $0.duration(to: .now)).seconds } ?? 0
            let milliseconds = look ? 0 : Int32(max(0, min(remaining, listened != nil ? untilLook : 1)) * 1000) + 1
            let n = withExtendedLifetime(listened) { poll(&fds, 3, milliseconds) }
            if n > 0 && fds[1].revents != 0 { return nil }
            if n > 0 && fds[2].revents != 0 { wakeups.drain() }
            // A readable socket: its notifications are read on the next turn (statements that
            // hold the connection meanwhile hand theirs over through `news`).
        }
    }

    /// Listens on `db` (the lock held); `listening` says whether it could.
    func listen(on db: PostgresConnection) {
        listening = (try? db.execute("LISTEN \(PostgresSetup.channel)")) != nil
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
