import Foundation
import Synchronization
import Testing
@testable import Tandem

/// Change handlers are delivered as live queries are: on a serial queue, one call at a time, in
/// commit order, never on the committing thread; a slow handler delays only itself, and the
/// changes that arrive meanwhile merge into one, none dropped.
@Suite struct ChangeHandlerDeliveryTests {
    /// A commit returns while a handler of its change is still blocked, the handler did not run
    /// on the committing thread, and it can write the database itself (inline, that write would
    /// be a write nested in the commit's).
    @Test func aCommitNeverWaitsForAHandlerAndAHandlerMayWrite() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: twoTables)
        let release = DispatchSemaphore(value: 0)
        let writers = Mutex<[String]>([])
        let failures = Mutex<[String]>([])
        let committing = Mutex<pthread_t?>(nil)
        let calls = Mutex(0)
        let token = try db.addChangeHandler { change in
            // The first change to notes.
            guard change.tables.contains("notes") else { return }
            let call = calls.withLock { count -> Int in
                count += 1
                return count
            }
            guard call == 1 else { return }
            if let thread = committing.withLock({ $0 }), pthread_equal(thread, pthread_self()) != 0 {
                failures.withLock { $0.append("ran on the committing thread") }
            }
            if release.wait(timeout: .now() + 10) == .timedOut { failures.withLock { $0.append("never released") } }
            do {
                try db.execute("INSERT INTO todos(what) VALUES ('written by the handler')")
                writers.withLock { $0.append("handler") }
            } catch {
                failures.withLock { $0.append("its write failed: \(error)") }
            }
        }
        defer { token.cancel() }
        committing.withLock { $0 = pthread_self() }
        try db.execute("INSERT INTO notes(id, title) VALUES ('n', 'x')")  // returns with the handler blocked
        release.signal()
        try waitUntil("the handler's own write") { writers.withLock { $0 } == ["handler"] }
        #expect(failures.withLock { $0 } == [])
        #expect(try count(db, "SELECT count(*) FROM todos") == 1)
    }

    /// While a handler is blocked on one change, the commits after it arrive as one merged
    /// change with every table they touched; calls never overlap; after cancel none starts.
    @Test func changesMergeWhileAHandlerIsBehindAndNoneIsDropped() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: twoTables)
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let calls = Mutex<[Set<String>]>([])
        let running = Mutex(0), overlaps = Mutex(0)
        let token = try db.addChangeHandler { change in
            let alongside = running.withLock { count -> Int in
                count += 1
                return count
            }
            if alongside > 1 { overlaps.withLock { $0 += 1 } }
            defer { running.withLock { $0 -= 1 } }
            calls.withLock { $0.append(change.tables.intersection(["notes", "todos"])) }
            if calls.withLock({ $0.count }) == 1 {
                entered.signal()
                _ = release.wait(timeout: .now() + 10)
            }
        }
        try db.execute("INSERT INTO notes(id, title) VALUES ('first', 'x')")
        #expect(entered.wait(timeout: .now() + 10) == .success, "the first change is delivered")
        try db.execute("INSERT INTO todos(what) VALUES ('a')")
        try db.execute("INSERT INTO notes(id, title) VALUES ('second', 'x')")
        try db.execute("INSERT INTO todos(what) VALUES ('b')")
        release.signal()
        try waitUntil("the merged change") { calls.withLock { $0.count } == 2 }
        #expect(calls.withLock { $0 } == [["notes"], ["notes", "todos"]])
        #expect(overlaps.withLock { $0 } == 0)
        token.cancel()
        try db.execute("INSERT INTO notes(id, title) VALUES ('after', 'x')")
        // A change delivered after cancel would run on the handler's queue behind this probe's.
        let probe = try db.addChangeHandler { _ in }
        try db.execute("INSERT INTO todos(what) VALUES ('probe')")
        probe.cancel()
        #expect(calls.withLock { $0.count } == 2, "nothing after cancel")
    }

    /// An immediate handler runs on the committing thread before the write returns (and sees the
    /// commit), and on the observer thread for another process's commit.
    @Test func anImmediateHandlerRunsOnTheNoticingThread() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: twoTables)
        let committing = pthread_self()
        let calls = Mutex<[(onCommittingThread: Bool, notes: Int64?)]>([])
        let token = try db.addImmediateChangeHandler { change in
            // Changes that name notes only (the observer may report an unknown change when it starts).
            guard !change.isUnknown, change.tables.contains("notes") else { return }
            let notes = try? db.read { try $0.scalar("SELECT count(*) FROM notes").int64Value }
            calls.withLock { $0.append((pthread_equal(committing, pthread_self()) != 0, notes ?? nil)) }
        }
        defer { token.cancel() }
        try db.execute("INSERT INTO notes(id, title) VALUES ('own', 'x')")
        // (The observer thread may report the same commit too, when it reads it first.)
        let own = calls.withLock { $0.filter(\.onCommittingThread) }
        #expect(own.count == 1, "told once on the committing thread before the write returned")
        #expect(own.first?.notes == 1, "the handler reads the commit")
        #expect(try runTandem(["exec", db.path, "INSERT INTO notes(id, title) VALUES ('other', 'process')"]).status == 0)
        try waitUntil("another process's change, on the observer thread") { calls.withLock { $0.contains { !$0.onCommittingThread && $0.notes == 2 } } }
    }

    /// A handler given a queue runs there; the changes of another process arrive too.
    @Test func aHandlerRunsOnTheQueueItWasGiven() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: twoTables)
        let queue = DispatchQueue(label: "caller's queue")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let seen = Mutex<[Int?]>([])
        let token = try db.addChangeHandler(on: queue) { _ in seen.withLock { $0.append(DispatchQueue.getSpecific(key: key)) } }
        defer { token.cancel() }
        #expect(try runTandem(["exec", db.path, "INSERT INTO notes(id, title) VALUES ('other', 'process')"]).status == 0)
        try waitUntil("another process's change") { !seen.withLock { $0 }.isEmpty }
        try db.execute("INSERT INTO todos(what) VALUES ('own')")
        try waitUntil("this process's change") { seen.withLock { $0 }.count >= 2 }
        #expect(seen.withLock { $0 }.allSatisfy { $0 == 7 })
    }
}
