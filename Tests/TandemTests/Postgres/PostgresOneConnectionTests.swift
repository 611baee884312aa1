import Foundation
import Synchronization
import Testing
@testable import Tandem
@testable import TandemPostgres

/// A client costs the server one connection: uploads, downloads and the wait's `LISTEN` share it,
/// and no background compaction opens another in the backend's first minute.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct PostgresOneConnectionTests {
    private func transaction(_ id: Int64, _ row: String) -> CrudTransaction {
        CrudTransaction(
            transactionID: id, entries: [CrudEntry(id: id, transactionID: id, op: .put, table: "notes", rowID: row, data: ["title": .string(row)])])
    }

    /// The sessions of the test's database other than the asking one.
    private func sessions(_ admin: PostgresConnection) throws -> Int {
        Int(
            try admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
            ).first?.first.flatMap { $0 } ?? "") ?? -1
    }

    /// While a wait listens, the client uploads and downloads on the same connection, and
    /// another client's upload still wakes the wait: two clients, two sessions.
    @Test func aClientWaitsUploadsAndDownloadsOnOneConnection() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let admin = try PostgresConnection(url)
        let backend = try PostgresBackend(conninfo: url), other = try PostgresBackend(conninfo: url)
        let start = try settledCursor(backend)
        let woken = Mutex<String??>(nil)
        let ended = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let next = try? backend.waitForChanges(after: start, timeout: .seconds(20))
            woken.withLock { $0 = .some(next) }
            ended.signal()
        }
        try waitUntil("the wait to listen") { try backend.withConnection { _, link in link.listening } }
        try backend.upload([transaction(1, "own")], clientID: "a", epoch: 1)
        _ = try settledCursor(backend)
        try other.upload([transaction(1, "other")], clientID: "b", epoch: 1)
        #expect(ended.wait(timeout: .now() + 20) == .success, "another client's upload wakes the wait")
        #expect(woken.withLock { $0 } != .some(nil), "the wait ended with a cursor, not by its timeout")
        #expect(try sessions(admin) == 2, "one session per client")
    }

    /// A notification that a statement read (libpq keeps it with the statement's answer, where
    /// the wait's poll(2) does not see it) is handed to the wait, which answers at once although
    /// its cursor was checked and its next look is a minute away: with the cursor it was given,
    /// since the notification announced a change this unscoped client downloads.
    @Test func aNotificationReadByAStatementWakesTheWait() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let backend = try PostgresBackend(conninfo: url, lookInterval: .seconds(60))
        let start = try settledCursor(backend)
        #expect(try backend.waitForChanges(after: start, timeout: .zero) == nil, "nothing after the cursor yet")
        try PostgresConnection(url).execute("INSERT INTO notes(id, title) VALUES ('by-psql', 'x')")
        try waitUntil("a statement to read the notification") {
            try backend.withConnection { _ = try $0.execute("SELECT 1") }
            return try backend.withConnection { _, link in link.news == .change }
        }
        let next = try #require(try backend.waitForChanges(after: start, timeout: .seconds(5)), "the handed-over notification wakes the wait")
        #expect(next == start, "no look: the notification announced the change")
        #expect(try backend.waitForChanges(after: next, timeout: .zero) == nil, "the change wakes one wait")
    }

    /// A notification read late, with a statement's answer, of a transaction the wait's cursor
    /// already holds (a download saw the change) wakes no wait: Tandem's notifications name
    /// their transaction.
    @Test func aLateNotificationOfAChangeTheCursorHoldsWakesNoWait() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let backend = try PostgresBackend(conninfo: url, lookInterval: .seconds(60))
        let start = try settledCursor(backend)
        #expect(try backend.waitForChanges(after: start, timeout: .zero) == nil, "nothing after the cursor yet")
        try PostgresConnection(url).execute("INSERT INTO notes(id, title) VALUES ('by-psql', 'x')")
        let downloaded = try backend.fetchChanges(after: start, limit: 100)
        #expect(downloaded.changes.map(\.rowID) == ["by-psql"])
        try waitUntil("a statement to read the notification") {
            try backend.withConnection { _ = try $0.execute("SELECT 1") }
            return try backend.withConnection { _, link in link.news == .change }
        }
        // As after a wait that looked at that cursor while listening: no look is due before the news.
        backend.feedWait.withLock { $0.checkedCursor = downloaded.nextCursor }
        #expect(try backend.waitForChanges(after: downloaded.nextCursor, timeout: .milliseconds(300)) == nil, "the change was downloaded: no wait wakes for it")
        // A later change still wakes it.
        try PostgresConnection(url).execute("INSERT INTO notes(id, title) VALUES ('later', 'x')")
        #expect(try backend.waitForChanges(after: downloaded.nextCursor, timeout: .seconds(5)) != nil)
    }

    /// A client that sees every change answers a notification of Tandem's from another session
    /// without looking at the feed (its pass reads the position with its first page); a
    /// notification with a payload (another application's, on the same channel) makes it look,
    /// and a look that finds nothing ends no wait. Found by the cursor each wait returns: a look
    /// returns the position it read, which lies after a change it found.
    @Test func onlyTandemsNotificationsEndAWaitWithoutALook() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let backend = try PostgresBackend(conninfo: url, lookInterval: .seconds(60))
        let start = try settledCursor(backend)
        #expect(try backend.waitForChanges(after: start, timeout: .zero) == nil)
        let other = try PostgresConnection(url)
        let foreign = "SELECT pg_notify('\(PostgresSetup.channel)', 'not Tandem''s')"
        try other.execute(foreign)
        #expect(try backend.waitForChanges(after: start, timeout: .milliseconds(500)) == nil, "a payload: the wait looked and found nothing")
        // A change that notifies nothing (put into the log by hand), then a foreign notification.
        try other.execute("INSERT INTO tandem_changes(op, type, id, data) VALUES ('PUT', 'notes', 'silent', '{\"title\": \"s\"}')")
        try other.execute(foreign)
        let looked = try #require(try backend.waitForChanges(after: start, timeout: .seconds(5)), "the look finds the change")
        #expect(looked != start, "a look answers with the position it read")
        #expect(try backend.fetchChanges(after: looked, limit: 10).changes.isEmpty)
        try other.execute("INSERT INTO notes(id, title) VALUES ('by-psql', 'x')")
        #expect(try backend.waitForChanges(after: looked, timeout: .seconds(5)) == looked, "Tandem's notification: no look")
        #expect(try backend.fetchChanges(after: looked, limit: 10).changes.map(\.rowID) == ["by-psql"])
    }

    /// Notifications that keep coming (here `NOTIFY` from other sessions, faster than a look's
    /// round trip, announcing nothing this client sees) keep a look due, yet the wait ends at
    /// its deadline: it does not hold the connection in look after look past it.
    @Test func aWaitEndsAtItsDeadlineWhileNewsKeepsComing() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let backend = try PostgresBackend(conninfo: url)
        let start = try settledCursor(backend)
        #expect(try backend.waitForChanges(after: start, timeout: .zero) == nil)
        let stop = Atomic<Bool>(false), sent = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0), notifiers = 4
        for _ in 0..<notifiers {
            Thread.detachNewThread {
                defer { done.signal() }
                guard let notifier = try? PostgresConnection(url) else { return }
                // Ten notifications per round trip (payloads differ: equal ones fold into one).
                let batch = "DO $$BEGIN FOR i IN 1..10 LOOP PERFORM pg_notify('\(PostgresSetup.channel)', i::text); END LOOP; END$$"
                while !stop.load(ordering: .relaxed), sent.load(ordering: .relaxed) < 2_000_000 {
                    guard (try? notifier.execute(batch)) != nil else { break }
                    sent.add(10, ordering: .relaxed)
                }
            }
        }
        defer {
            stop.store(true, ordering: .relaxed)
            for _ in 0..<notifiers { done.wait() }
        }
        try waitUntil("the notifiers to be under way") { sent.load(ordering: .relaxed) > 100 }
        let began = Date()
        #expect(try backend.waitForChanges(after: start, timeout: .milliseconds(300)) == nil)
        let took = Date().timeIntervalSince(began)
        #expect(took < 5, "the wait took \(took) s against a timeout of 0.3 s")
        #expect(!stop.load(ordering: .relaxed) && sent.load(ordering: .relaxed) < 2_000_000, "the notifiers still ran when the wait ended")
    }

    /// Background compaction (its own connection) waits for a process's first minute: an app's
    /// start, with its first downloads, does not pay for a second connection.
    @Test func noBackgroundCompactionInABackendsFirstMinute() throws {
        let backend = try PostgresBackend(conninfo: try TestPostgres.database(schema: notesSchema))
        let now = Date()
        let atOnce = backend.compactionIsDue(at: now)
        let aMinuteLater = backend.compactionIsDue(at: now.addingTimeInterval(PostgresHistory.interval + 1))
        let rightAfter = backend.compactionIsDue(at: now.addingTimeInterval(PostgresHistory.interval + 2))
        #expect(!atOnce && aMinuteLater)
        #expect(!rightAfter, "at most once a minute")
    }
}
