import Foundation
import Synchronization
import Testing
@testable import Tandem

/// The owner's backend waiter and its first pass: a client that has never synced runs one pass
/// at start, not a second one for the first sync its waiter was told of while that pass ran.
struct FirstPassWaitTests {
    /// A ``MemoryBackend`` whose first fetch and cursorless wait (a client that has never
    /// synced, which a backend answers at once) overlap, as when the waiter's connection opens
    /// beside the first pass: the wait answers once the fetch has begun, the fetch returns once
    /// the wait was asked (or after 2 s). It counts fetches and notes each wait's cursor.
    final class ObservedBackend: SyncBackend, @unchecked Sendable {
        let inner = MemoryBackend()
        let fetches = Atomic<Int>(0)
        let firstFetch = DispatchSemaphore(value: 0)
        let cursorlessWait = DispatchSemaphore(value: 0)
        let waits = Mutex<[String]>([])
        var identifier: String { inner.identifier }

        func upload(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws {
            try inner.upload(transactions, clientID: clientID, epoch: epoch)
        }

        /// When set, the cursorless wait answers only once this says the first pass has ended
        /// (and the first fetch does not wait for it): the waiter is told of the first sync late.
        var answerAfterFirstPass: (@Sendable () -> Bool)?

        func fetchChanges(after cursor: String, limit: Int) throws -> ChangeBatch {
            if fetches.add(1, ordering: .relaxed).newValue == 1, answerAfterFirstPass == nil {
                firstFetch.signal()
                _ = cursorlessWait.wait(timeout: .now() + 2)
            }
            return try inner.fetchChanges(after: cursor, limit: limit)
        }

        func waitForChanges(after cursor: String, timeout: Duration) throws -> String? {
            waits.withLock { $0.append(cursor) }
            if cursor.isEmpty, let answerAfterFirstPass {
                let deadline = Date(timeIntervalSinceNow: 30)
                while !answerAfterFirstPass() {
                    guard Date() < deadline else { throw TandemError.invalidArguments("the first pass did not end within 30 s") }
                    usleep(1_000)
                }
            } else if cursor.isEmpty {
                cursorlessWait.signal()
                firstFetch.wait()
                firstFetch.signal()
            }
            return try inner.waitForChanges(after: cursor, timeout: timeout)
        }

        func interruptWaits() { inner.interruptWaits() }
    }

    @Test func aClientThatNeverSyncedRunsOnePassAtStart() throws {
        let dir = try TemporaryDirectory()
        let backend = ObservedBackend()
        // The server holds a row: a cursorless wait answers at once.
        let writer = try SharedDatabase(path: dir.path("writer.db"), schema: notesSchema)
        try writer.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one')")
        _ = try writer.sync.once(with: backend.inner)
        let fetchesBefore = backend.fetches.load(ordering: .relaxed)
        #expect(fetchesBefore == 0, "the writer synced with the inner backend")

        let db = try SharedDatabase(path: dir.path("new.db"), schema: notesSchema)
        let session = try db.sync.start(with: backend)
        defer { session.stop() }
        try Self.expectOnePass(db, backend)
        #expect(backend.waits.withLock { $0 }.filter { $0.isEmpty }.count == 1, "one cursorless wait")
    }

    /// The waiter's cursorless wait answers only after the first pass has ended (its thread was
    /// slow to start, say): the answer is the first sync that pass did, and no second pass runs.
    @Test func aWaiterToldOfTheFirstSyncAfterThePassRunsNoSecondPass() throws {
        let dir = try TemporaryDirectory()
        let backend = ObservedBackend()
        let writer = try SharedDatabase(path: dir.path("writer.db"), schema: notesSchema)
        try writer.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one')")
        _ = try writer.sync.once(with: backend.inner)
        let db = try SharedDatabase(path: dir.path("new.db"), schema: notesSchema)
        backend.answerAfterFirstPass = { (try? db.read { try $0.stored(.cursor).stringValue ?? "" })?.isEmpty == false }
        let session = try db.sync.start(with: backend)
        defer { session.stop() }
        try Self.expectOnePass(db, backend)
    }

    /// The first pass downloads the server's row and the waiter then waits after the cursor it
    /// stored; the first pass fetched once (a full sync of one row), and a second pass, which
    /// would fetch within milliseconds of the waiter's answer, never comes.
    static func expectOnePass(_ db: SharedDatabase, _ backend: ObservedBackend) throws {
        try waitUntil("the first pass's download") { try count(db, "SELECT count(*) FROM notes") == 1 }
        let cursor = try #require(try db.read { try $0.stored(.cursor).stringValue })
        try waitUntil("the waiter waiting after the stored cursor") { backend.waits.withLock { $0.contains(cursor) } }
        let deadline = Date(timeIntervalSinceNow: 1)
        while Date() < deadline, backend.fetches.load(ordering: .relaxed) == 1 { usleep(10_000) }
        #expect(backend.fetches.load(ordering: .relaxed) == 1, "no second pass for the first sync the first pass did")
    }
}
