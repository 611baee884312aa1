import Foundation
import Synchronization
import Testing
@testable import Tandem

/// An owner whose writer commits every few milliseconds uploads each commit as it comes, and
/// downloads its own uploads' answers gathered (``PassSchedule/ownAnswersGathering``), the last
/// ones with no wake-up but the time; anyone else's change still comes at once.
struct OwnAnswersTests {
    /// Whether `db` has downloaded everything the server holds (its own uploads' answers included).
    private func caughtUp(_ db: SharedDatabase, _ server: EmbeddedBackend) throws -> Bool {
        let cursor = try db.read { try $0.stored(.cursor).stringValue } ?? ""
        return try db.uploadQueue.pendingCount() == 0 && server.fetchChanges(after: cursor, limit: 10).changes.isEmpty
    }

    @Test func aPacedWritersAnswersAreDownloadedGathered() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let backend = ObservedEmbeddedBackend(try EmbeddedBackend(path: dir.path("server.db")))
        let server = try EmbeddedBackend(path: dir.path("server.db"))
        let session = try db.sync.start(with: backend)
        defer { session.stop() }
        try waitUntil("the first pass") { try caughtUp(db, server) && backend.fetches.load(ordering: .relaxed) > 0 }
        let (uploadsBefore, fetchesBefore) = (backend.uploads.load(ordering: .relaxed), backend.fetches.load(ordering: .relaxed))
        // 100 commits 5 ms apart: each wakes the owner, which uploads it in a pass of its own.
        let began = ContinuousClock.now
        for i in 0..<100 {
            try db.execute("INSERT INTO notes(id, title) VALUES (?, 'paced')", ["n\(i)"])
            usleep(5_000)
        }
        // The last answers come when the gathering is over: nothing else wakes the owner now.
        try waitUntil("the owner to download its last uploads' answers") { try caughtUp(db, server) }
        let took = began.duration(to: .now)
        let uploads = backend.uploads.load(ordering: .relaxed) - uploadsBefore
        let fetches = backend.fetches.load(ordering: .relaxed) - fetchesBefore
        // About one download per gathering (each pass's start counts: allow twice as many), where
        // a download after every upload fetched once per upload.
        let most = 2 * Int(took / PassSchedule.ownAnswersGathering) + 4
        #expect(fetches <= most, "\(fetches) fetches for \(uploads) uploads in \(took): at most \(most)")
        #expect(fetches < uploads)
        #expect(try db.sync.status().downloadPendingSince == nil)
    }

    /// While a writer on A commits every 5 ms for as long as the test runs, another client's
    /// change still reaches A: the gathering is counted from the last download began, so commits
    /// cannot put A's downloads off for ever, and the backend's announcement ends it at once.
    @Test func anotherClientsChangeComesWhileAWriterKeepsCommitting() throws {
        let dir = try TemporaryDirectory()
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        let server = try EmbeddedBackend(path: dir.path("server.db"))
        let session = try a.sync.start(with: try EmbeddedBackend(path: dir.path("server.db")))
        defer { session.stop() }
        try waitUntil("the first pass") { try caughtUp(a, server) && a.sync.status().hasSynced }
        let stop = Atomic<Bool>(false), writes = Atomic<Int>(0)
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { finished.signal() }
            while !stop.load(ordering: .relaxed) {
                guard (try? a.execute("INSERT INTO notes(id, title) VALUES (?, 'paced')", ["a\(writes.load(ordering: .relaxed))"])) != nil else { return }
                writes.add(1, ordering: .relaxed)
                usleep(5_000)
            }
        }
        defer {
            stop.store(true, ordering: .relaxed)
            finished.wait()
        }
        try waitUntil("the writer under way") { writes.load(ordering: .relaxed) >= 20 }
        try b.execute("INSERT INTO notes(id, title) VALUES ('from-b', 'x')")
        _ = try b.sync.once(with: try EmbeddedBackend(path: dir.path("server.db")))
        try waitUntil(timeout: 5, "B's row on A while A's writer commits") {
            try count(a, "SELECT count(*) FROM notes WHERE id = 'from-b'") == 1
        }
        let written = writes.load(ordering: .relaxed)
        try waitUntil("the writer still committing") { writes.load(ordering: .relaxed) > written }
    }

    /// A stop while the owner gathers its own uploads' answers downloads them first: the owner
    /// stops with its rows as the server holds them.
    @Test func aStopDownloadsTheAnswersLeftForLater() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let server = try EmbeddedBackend(path: dir.path("server.db"))
        let backend = ObservedEmbeddedBackend(try EmbeddedBackend(path: dir.path("server.db")))
        let session = try db.sync.start(with: backend)
        try waitUntil("the first pass") { try caughtUp(db, server) && backend.fetches.load(ordering: .relaxed) > 0 }
        // The first upload after a quiet stretch downloads at once; the next, within the
        // gathering, leaves its answer for later.
        try db.execute("INSERT INTO notes(id, title) VALUES ('first', 'x')")
        try waitUntil("the first upload's answer") { try caughtUp(db, server) }
        let fetches = backend.fetches.load(ordering: .relaxed)
        try db.execute("INSERT INTO notes(id, title) VALUES ('second', 'x')")
        try waitUntil("the second upload") { try db.uploadQueue.pendingCount() == 0 }
        let leftForLater = backend.fetches.load(ordering: .relaxed) == fetches
        session.stop()
        #expect(try caughtUp(db, server), "stopped with every answer downloaded (left for later: \(leftForLater))")
    }

    /// A stop that comes while the upload whose answer the pass leaves for later is under way
    /// (so the pass decides after the stop, before the loop waits): downloaded first too.
    @Test func aStopDuringAnUploadWhoseAnswerIsLeftForLaterDownloadsItFirst() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let server = try EmbeddedBackend(path: dir.path("server.db"))
        let held = Atomic<Int>(0)
        let inUpload = WakeFlag()
        var backend: ObservedEmbeddedBackend!
        backend = ObservedEmbeddedBackend(
            try EmbeddedBackend(path: dir.path("server.db")),
            beforeUpload: { number in
                guard number == held.load(ordering: .relaxed) else { return }
                inUpload.raise()
                // Held until the stop has begun (it interrupts the backend's waits), at most 10 s.
                _ = backend.interrupted.wait(timeout: 10)
            })
        let session = try db.sync.start(with: backend)
        try waitUntil("the first pass") { try caughtUp(db, server) && backend.fetches.load(ordering: .relaxed) > 0 }
        try db.execute("INSERT INTO notes(id, title) VALUES ('first', 'x')")
        try waitUntil("the first upload's answer") { try caughtUp(db, server) }
        held.store(backend.uploads.load(ordering: .relaxed) + 1, ordering: .relaxed)
        try db.execute("INSERT INTO notes(id, title) VALUES ('second', 'x')")
        #expect(inUpload.wait(timeout: 10), "the second upload never began")
        session.stop()
        #expect(try caughtUp(db, server), "stopped with every answer downloaded")
    }
}
