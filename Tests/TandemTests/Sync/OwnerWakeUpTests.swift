import Foundation
import Synchronization
import Testing
@testable import Tandem

/// The owner's loop raised at another writer's wake-up, before the observer's reading.
@Suite struct OwnerWakeUpTests {
    /// A ``MemoryBackend`` whose next fetch, once armed, says so and waits to be let go.
    final class GatedBackend: SyncBackend, @unchecked Sendable {
        let inner = MemoryBackend()
        var identifier: String { inner.identifier }
        let armed = Mutex(false)
        let fetches = Atomic<Int>(0)
        let fetching = DispatchSemaphore(value: 0), open = DispatchSemaphore(value: 0)

        func upload(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws {
            try inner.upload(transactions, clientID: clientID, epoch: epoch)
        }

        func fetchChanges(after cursor: String, limit: Int) throws -> ChangeBatch {
            fetches.add(1, ordering: .relaxed)
            if armed.withLock({ a in
                defer { a = false }; return a
            }) {
                fetching.signal()
                _ = open.wait(timeout: .now() + 10)  // let go by the test (bounded, should a retry miss it)
            }
            return try inner.fetchChanges(after: cursor, limit: limit)
        }

        func waitForChanges(after cursor: String, timeout: Duration) throws -> String? {
            try inner.waitForChanges(after: cursor, timeout: timeout)
        }

        func interruptWaits() { inner.interruptWaits() }

        func has(_ id: String) -> Bool { inner.rows().contains { $0.id == id } }
    }

    /// What the observer tells raises the loop when it may have queued entries no pass has seen:
    /// changes of the queue made by others, except those read after a wake-up that raised it
    /// already; but unknown ones even then, which may hold a commit of a writer that wakes no one
    /// (the sqlite3 shell) made between the wake-up, whose pass may have read the queue already,
    /// and the reading, after which the backstop poll finds nothing new.
    @Test func whatRaisesTheLoop() {
        let own = CommitTag(), queue = DatabaseChange(rawTables: [InternalTables.crud, "ps_data__notes"])
        let drafts = DatabaseChange(rawTables: ["ps_data__drafts"])
        #expect(SyncEngine.raisesTheLoop(queue, origin: .thisProcess, ownCommits: own), "an app's write in this process")
        #expect(SyncEngine.raisesTheLoop(queue, origin: .poll, ownCommits: own), "another's, noticed by the poll")
        #expect(!SyncEngine.raisesTheLoop(queue, origin: .wakeUp, ownCommits: own), "raised at its wake-up already")
        #expect(SyncEngine.raisesTheLoop(.unknown, origin: .wakeUp, ownCommits: own), "a writer that wakes no one may be in it")
        #expect(SyncEngine.raisesTheLoop(.unknown, origin: .poll, ownCommits: own))
        #expect(!SyncEngine.raisesTheLoop(drafts, origin: .thisProcess, ownCommits: own), "not the queue")
        #expect(!SyncEngine.raisesTheLoop(drafts, origin: .poll, ownCommits: own))
        #expect(!SyncEngine.raisesTheLoop(.unknown(tag: own), origin: .thisProcess, ownCommits: own), "the loop's own pass")
    }

    /// Another writer's commits to a local-only table (nothing queued, nothing on the server
    /// changed) raise the owner's loop at their wake-ups, but a pass that uploads nothing, with
    /// no answers owed and nothing announced, fetches nothing, however long after the last
    /// download. Five such commits, each past ``PassSchedule/ownAnswersGathering``, then a queued
    /// note as a barrier (its pass has run once the backend has it).
    @Test func anotherWritersLocalOnlyCommitsMakeTheOwnerFetchNothing() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: queueSchema)
        let backend = GatedBackend()
        let session = try db.sync.start(with: backend)
        defer { session.stop() }
        try waitUntil("the first pass") { try db.sync.status().hasSynced }
        let other = try SharedDatabase(path: db.path, schema: queueSchema)
        let heard = Atomic<Int>(0)
        let token = try db.addImmediateChangeHandler { change in if change.tables.contains("drafts") { heard.add(1, ordering: .relaxed) } }
        defer { token.cancel() }
        let before = backend.fetches.load(ordering: .relaxed)
        for i in 0..<5 {
            let began = ContinuousClock.now  // past the gathering since the last download
            try waitUntil("150 ms") { began.duration(to: .now) > .milliseconds(150) }
            try other.execute("INSERT INTO drafts(id, body) VALUES (?, 'local only')", ["d\(i)"])
            try waitUntil(timeout: 5, "the commit to drafts heard") { heard.load(ordering: .relaxed) == i + 1 }
        }
        try other.execute("INSERT INTO notes(id, title) VALUES ('barrier', 'queued')")
        try waitUntil(timeout: 5, "the barrier note uploaded") { backend.has("barrier") }
        let fetches = backend.fetches.load(ordering: .relaxed) - before
        #expect(fetches <= 1, "\(fetches) backend fetches for five commits to a local-only table and one upload")
    }
}
