import Foundation
import Synchronization
import Testing
@testable import Tandem

/// Commits racing a wake-up: between its handlers and its reading, after a failed own COMMIT,
/// and the answers a failed pass owes.
@Suite struct WakeUpRaceTests {
    /// A wake-up handler (the owner's loop, the embedded backend's wait) reads what it waits for
    /// itself when called. Another process commits c after the handlers were told of an earlier
    /// wake-up w1 and before w1's reading (the observer is held in a wake-up handler, as it can be
    /// there naturally for the microseconds between the handlers and the reading's WAL position).
    /// That reading reports c and moves `read` to the WAL after c, where c's own wake-up (and its
    /// process's exit) finds nothing new: the wake-up handlers are told again after the reading.
    @Test func anotherProcesssCommitBetweenAWakeUpsHandlersAndItsReadingStillWakesTheHandlers() throws {
        let dir = try TemporaryDirectory()
        let (db, _, token) = try databaseWithoutPoll(at: dir.path("a.db"))
        defer { token.cancel() }
        try db.write { try $0.execute("INSERT INTO todos(what) VALUES ('first')") }
        let hold = WakeUpHold()
        let (holding, release) = (hold.holding, hold.release)
        let wake = try db.addWakeUpHandler { hold.handler() }
        defer { wake.cancel() }
        let heard = Mutex<[(DatabaseChange, ChangeObserver.Origin)]>([])
        let subscription = try db.observer.subscribe { change, origin in heard.withLock { $0.append((change, origin)) } }
        defer { db.observer.unsubscribe(subscription) }
        // A warm-up commit of another process, heard: nothing of it is unread.
        #expect(try runTandem(["exec", db.path, "INSERT INTO todos(what) VALUES ('warm-up')"]).status == 0)
        try waitUntil(timeout: 5, "the warm-up heard") { heard.withLock { !$0.isEmpty } }
        hold.arm()
        #expect(try runTandem(["exec", db.path, "INSERT INTO todos(what) VALUES ('w1')"]).status == 0)
        #expect(holding.wait(timeout: .now() + 5) == .success, "w1's wake-up never reached the handlers")
        let callsAtW1 = hold.calls.load(ordering: .relaxed)
        let passedAtW1 = db.observer.wakeUpsPassedOver
        // c commits now: after the handlers were told of w1, before w1's reading.
        #expect(try runTandem(["exec", db.path, "INSERT INTO notes(id, title) VALUES ('c', 'after the handlers, before the reading')"]).status == 0)
        release.signal()
        try waitUntil(timeout: 5, "c read") { heard.withLock { $0.contains { $0.0.tables.contains("notes") } } }
        let origins = heard.withLock { $0.filter { $0.0.tables.contains("notes") }.map(\.1) }
        try waitUntil(
            timeout: 5,
            "a wake-up handler told after c committed (c reported with origins \(origins); wake-ups passed over since w1: \(db.observer.wakeUpsPassedOver - passedAtW1))"
        ) {
            hold.calls.load(ordering: .relaxed) > callsAtW1
        }
    }

    /// A pass uploads entries and then fails (its download, say); the next pass, after the backoff,
    /// finds the queue empty and uploads nothing. The answers to the failed pass's uploads are
    /// owed all the same: the pass downloads, or `passEnded` schedules the download.
    @Test func answersToAFailedPasssUploadsAreStillOwed() {
        let t0 = ContinuousClock.now
        var schedule = PassSchedule(neverSynced: false)
        schedule.passBegan(at: t0, lastQueued: nil)
        _ = schedule.passEnded(at: t0 + .milliseconds(5), pass: .init(downloadBegan: t0 + .milliseconds(1), moreToUpload: false, uploaded: false))
        // A pass uploads, asks (downloads now), and its download fails.
        schedule.passBegan(at: t0 + .seconds(5), lastQueued: 10)
        #expect(schedule.afterUploads(at: t0 + .seconds(5), moreQueued: false, uploaded: true) == .now)
        schedule.passFailed()
        // The retry after the backoff: nothing queued, nothing uploaded.
        schedule.passBegan(at: t0 + .seconds(7), lastQueued: nil)
        let download = schedule.afterUploads(at: t0 + .seconds(7), moreQueued: false, uploaded: false)
        let due = schedule.passEnded(at: t0 + .seconds(7), pass: .init(downloadBegan: nil, moreToUpload: false, uploaded: false))
        #expect(download == .now || due != nil, "the failed pass's answers: download \(download), next download due in \(String(describing: due))")
    }

    /// A ``MemoryBackend`` whose next fetch, once armed, fails.
    final class FailingFetchBackend: SyncBackend, @unchecked Sendable {
        let inner = MemoryBackend()
        var identifier: String { inner.identifier }
        let armed = Mutex(false)
        let failed = Atomic<Int>(0)
        func upload(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws {
            try inner.upload(transactions, clientID: clientID, epoch: epoch)
        }
        func fetchChanges(after cursor: String, limit: Int) throws -> ChangeBatch {
            if armed.withLock({ a in
                defer { a = false }; return a
            }) {
                failed.add(1, ordering: .relaxed)
                throw URLError(.networkConnectionLost)  // transient: the loop backs off and retries
            }
            return try inner.fetchChanges(after: cursor, limit: limit)
        }
        /// Announces nothing: the owner's own uploads wake no waiter of a real backend (the
        /// ``MemoryBackend``'s wakes for every upload), and no one else writes.
        let interrupted = DispatchSemaphore(value: 0)
        func waitForChanges(after cursor: String, timeout: Duration) throws -> String? {
            _ = interrupted.wait(timeout: .now() + timeout.seconds)
            return nil
        }
        func interruptWaits() { interrupted.signal() }
        func has(_ id: String) -> Bool { inner.rows().contains { $0.id == id } }
    }

    /// The owner uploads a note and its pass's download fails once: the retry finds the queue
    /// empty and uploads nothing, but answers are owed since the failure: it downloads, and the
    /// note is synced (`synced` reaches `uploaded`).
    @Test func aPassThatUploadsAndThenFailsStillGetsItsAnswers() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: queueSchema)
        let backend = FailingFetchBackend()
        let session = try db.sync.start(with: backend)
        defer { session.stop() }
        try waitUntil("the first pass") { try db.sync.status().hasSynced }
        let began = ContinuousClock.now  // past the gathering since the last download: the pass downloads at once
        try waitUntil("150 ms") { began.duration(to: .now) > .milliseconds(150) }
        backend.armed.withLock { $0 = true }
        try db.execute("INSERT INTO notes(id, title) VALUES ('n', 'uploaded, then the download fails')")
        try waitUntil(timeout: 5, "the note uploaded") { backend.has("n") }
        try waitUntil(timeout: 5, "the download failed") { backend.failed.load(ordering: .relaxed) == 1 }
        try waitUntil(timeout: 10, "the note synced (positions: \(try db.read { try SyncPositions.read(in: $0) }))") {
            let positions = try db.read { try SyncPositions.read(in: $0) }
            return positions.synced >= positions.uploaded && positions.uploaded > 0
        }
    }

    /// This process's commit is told to the observer (sequence `n`, begun at the WAL's position B),
    /// and its COMMIT fails: rolled back, SQLite's lock is free while Tandem's is still held until
    /// the failure is told (``Writer/write``'s catch). The sqlite3 shell, which takes SQLite's lock
    /// only, commits then (B → B+1, the run's predicted end), and a wake-up is handled (simulated
    /// here, as ``OwnCommitBurstTests`` simulates the commit under way). Another process's next
    /// commit stamps `n` again (the failed one never counted). A commit counts in the run only once
    /// its writer confirms its COMMIT, so that wake-up is read, and both commits are reported.
    @Test func aFailedOwnCommitRacedByTheShellAndAWakeUpHidesNoCommit() throws {
        let dir = try TemporaryDirectory()
        let (db, seen, token) = try databaseWithoutPoll(at: dir.path("a.db"))
        defer { token.cancel() }
        try db.write { try $0.execute("INSERT INTO todos(what) VALUES ('first')") }
        #expect(try runTandem(["exec", db.path, "INSERT INTO notes(id, title) VALUES ('b0', 'barrier')"]).status == 0)
        try waitUntil(timeout: 5, "the barrier reported") { seen.withLock { $0.contains { $0.tables.contains("notes") } } }
        let counter = WALCommitCounter(databasePath: db.path)
        let next = try #require(try db.read { try $0.connection.counter(.sequence) }) + 1
        db.observer.ownCommit(sequence: next, .committing(begin: counter.position))  // told before its COMMIT
        // Its COMMIT failed and rolled back; the shell commits before the failure is told.
        try sqliteShell(db.path, "INSERT INTO notes(id, title) VALUES ('s', 'from the shell')")
        let passed = db.observer.wakeUpsPassedOver
        let fd = open(DatabaseFiles(database: db.path).notify, O_RDONLY)
        FileWakeup.signal(fd: fd)  // a wake-up handled in between (another process's exit, a late one of our own)
        close(fd)
        try waitUntil(timeout: 5, "the wake-up handled") { db.observer.wakeUpsPassedOver > passed || seen.withLock { $0.contains { $0.isUnknown } } }
        db.observer.ownCommit(sequence: next, .failed)  // the failure told
        seen.withLock { $0.removeAll() }
        #expect(try runTandem(["exec", db.path, "INSERT INTO notes(id, title) VALUES ('after', 'stamps the number of the failed commit')"]).status == 0)
        try waitUntil(timeout: 5, "another process's commit after the failed one reported (sequence \(next); wake-ups passed over: \(db.observer.wakeUpsPassedOver - passed))") {
            seen.withLock { $0.contains { $0.isUnknown || $0.tables.contains("notes") } }
        }
    }

    /// The loop-level consequence of the first test. The observer is held in a wake-up handler
    /// at another process's commit w1 (to a local-only table); meanwhile the owner starts, and
    /// its first pass reads the queue (empty: the pass reads it no more) and is held in its
    /// download. Another process queues note c. The observer's reading after w1 reports c with
    /// origin .wakeUp, and c's wake-up, the WAL where that reading left it, is passed over; the
    /// wake-up handlers told again after the reading raise the loop, and c is uploaded.
    @Test func aNoteQueuedBetweenAWakeUpsHandlersAndItsReadingIsUploaded() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: queueSchema)
        let hold = WakeUpHold()
        let (holding, release) = (hold.holding, hold.release)
        let wake = try db.addWakeUpHandler { hold.handler() }
        defer { wake.cancel() }
        hold.arm()
        #expect(try runTandem(["exec", db.path, "INSERT INTO drafts(id, body) VALUES ('w1', 'local only')"]).status == 0)
        #expect(holding.wait(timeout: .now() + 5) == .success, "w1's wake-up never reached the handlers")
        let backend = OwnerWakeUpTests.GatedBackend()
        backend.armed.withLock { $0 = true }
        let session = try db.sync.start(with: backend)
        defer { session.stop() }
        #expect(backend.fetching.wait(timeout: .now() + 5) == .success, "the first pass never downloaded")
        #expect(try runTandem(["exec", db.path, "INSERT INTO notes(id, title) VALUES ('c', 'queued')"]).status == 0)
        release.signal()
        backend.open.signal()
        try waitUntil(timeout: 5, "the first pass ended") { try db.sync.status().hasSynced }
        try waitUntil(timeout: 5, "the queued note c uploaded (queue: \(try db.uploadQueue.pendingCount()) entries)") { backend.has("c") }
    }
}

/// Holds the observer thread in a wake-up handler, once armed, until released (at most 10 s),
/// counting the calls.
final class WakeUpHold: Sendable {
    let calls = Atomic<Int>(0)
    let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
    private let armed = Mutex(false)

    func arm() { armed.withLock { $0 = true } }

    func handler() {
        calls.add(1, ordering: .relaxed)
        guard
            armed.withLock({ armed in
                defer { armed = false }; return armed
            })
        else { return }
        holding.signal()
        _ = release.wait(timeout: .now() + 10)
    }
}
