import Foundation
import Synchronization
import Testing
@testable import Tandem

/// Writers waiting for the cross-process write lock are served first come, first served, and a
/// waiter killed in the queue holds nobody up.
@Suite struct WriteLockQueueTests {
    /// Waiters that queued one after another behind a holder write in that order once the holder
    /// is killed (kill -9): each records how many rows were there before its own.
    @Test func waitersAreServedInArrivalOrder() throws {
        let (dir, queue, holder) = try Self.heldDatabase()
        let path = dir.path("a.db")
        var waiters: [Spawned] = []
        for position in 0..<5 {
            waiters.append(try Self.enqueue(path: path, id: "w\(position)", queue: queue))
        }
        holder.signal(SIGKILL)
        for waiter in waiters { #expect(try waiter.wait() == 0, "\(waiter.stderr)") }
        let db = try SharedDatabase(path: path)
        let positions = try db.read { tx in
            try tx.fetchAll("SELECT id, title FROM notes ORDER BY id").map { ($0[0].stringValue ?? "", $0[1].stringValue ?? "") }
        }
        #expect(positions.map(\.0) == ["w0", "w1", "w2", "w3", "w4"])
        #expect(positions.map(\.1) == ["0", "1", "2", "3", "4"], "rows before each waiter's own, in arrival order")
    }

    /// A waiter killed (kill -9) while queued frees its place at once: the waiter behind it writes
    /// as soon as the holder is gone (its busy timeout is 60 s).
    @Test func aWaiterKilledInTheQueueHoldsNobodyUp() throws {
        let (dir, queue, holder) = try Self.heldDatabase()
        let path = dir.path("a.db")
        let first = try Self.enqueue(path: path, id: "first", queue: queue)
        let killed = try Self.enqueue(path: path, id: "killed", queue: queue)
        let last = try Self.enqueue(path: path, id: "last", queue: queue)
        killed.signal(SIGKILL)
        #expect(try killed.wait() == 128 + SIGKILL)
        let released = nowMicroseconds()
        holder.signal(SIGKILL)
        #expect(try first.wait() == 0, "\(first.stderr)")
        #expect(try last.wait() == 0, "\(last.stderr)")
        let waited = Double(nowMicroseconds() - released) / 1e6
        #expect(waited < 4, "the waiter behind the killed one needed \(waited) s")
        let db = try SharedDatabase(path: path)
        let rows = try db.read { tx in
            try tx.fetchAll("SELECT id FROM notes ORDER BY id").map { $0[0].stringValue ?? "" }
        }
        // Both wrote; in either order, since the one behind the killed waiter moved up to wait
        // for the lock itself as soon as that waiter died.
        #expect(rows == ["first", "last"])
    }

    /// A waiter stopped (SIGSTOP) while it holds its place in the queue holds nobody up once the
    /// lock is free: the waiter behind it writes within a second of the holder's end, although
    /// the stopped one never moves and the busy timeout is 60 s.
    @Test func aStoppedWaiterHoldsNobodyUpOnceTheLockIsFree() throws {
        let (dir, queue, holder) = try Self.heldDatabase()
        let path = dir.path("a.db")
        let stopped = try Self.enqueue(path: path, id: "stopped", queue: queue)
        stopped.signal(SIGSTOP)
        defer { stopped.signal(SIGKILL) }
        let behind = try Self.enqueue(path: path, id: "behind", queue: queue)
        let released = nowMicroseconds()
        holder.signal(SIGKILL)
        #expect(try behind.wait(timeout: 30) == 0, "\(behind.stderr)")
        let waited = Double(nowMicroseconds() - released) / 1e6
        #expect(waited < 2, "the waiter behind the stopped one needed \(waited) s")
        let db = try SharedDatabase(path: path)
        #expect(try count(db, "SELECT count(*) FROM notes WHERE id = 'behind'") == 1)
    }

    /// A writer alone takes the lock at once after every streak: with no one in the queue it
    /// draws no ticket, however often its streak ends. Once a waiter queues, the writer whose
    /// streak ended queues behind it.
    @Test func aWriterAloneNeverQueues() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        var configuration = Configuration()
        configuration.writeLockStreakLimit = 1
        let db = try SharedDatabase(path: path, schema: notesSchema, configuration: configuration)
        let queue = try WriteLock(path: path + "-write.lock", databasePath: path, mode: 0o600, streakLimit: 1, timeoutMilliseconds: 0)
        let before = queue.ticketsDrawn
        for i in 0..<20 {
            try db.write { tx in try tx.execute("INSERT INTO notes(id, title) VALUES (?, 'alone')", ["n\(i)"]) }
        }
        #expect(queue.ticketsDrawn == before, "a writer alone drew \(queue.ticketsDrawn - before) tickets")

        let holder = try Spawned(testSupport: ["hold", path, "--seconds", "60"])
        try holder.waitForLine("locked") { $0 == "locked" }
        let waiter = try Self.enqueue(path: path, id: "waiter", queue: queue)
        let late = DispatchSemaphore(value: 0)
        let lateError = Mutex<(any Error)?>(nil)
        DispatchQueue.global().async {
            do {
                try db.write { tx in try tx.execute("INSERT INTO notes(id, title) VALUES ('late', (SELECT count(*) FROM notes))") }
            } catch { lateError.withLock { $0 = error } }
            late.signal()
        }
        try waitUntil("the writer whose streak ended queued behind the waiter") { queue.ticketsDrawn == before &+ 2 }
        holder.signal(SIGKILL)
        #expect(try waiter.wait() == 0, "\(waiter.stderr)")
        #expect(late.wait(timeout: .now() + 30) == .success, "the late writer never wrote")
        #expect(lateError.withLock { $0 } == nil)
        let titles = try db.read { tx in
            try tx.fetchAll("SELECT id, title FROM notes WHERE id IN ('waiter', 'late') ORDER BY id = 'late'").map { $0[1].stringValue ?? "" }
        }
        #expect(titles == ["20", "21"], "late after waiter: rows before each")
    }

    /// The lock file's record is a file anyone can damage: extreme values in its words must not
    /// stop a queued waiter or a writer.
    @Test func aDamagedLockRecordHoldsNobodyUp() throws {
        let (dir, queue, holder) = try Self.heldDatabase()
        let path = dir.path("a.db")
        let waiter = try Self.enqueue(path: path, id: "waiter", queue: queue)
        try Self.overwriteRecord(path: path) { words in
            for i in [0, 1, 3, 4, 6, 7] { words[i] = [Int64.max, Int64.min, -1, Int64.max - 1][i % 4] }
        }
        let released = nowMicroseconds()
        holder.signal(SIGKILL)
        #expect(try waiter.wait(timeout: 30) == 0, "\(waiter.stderr)")
        let waited = Double(nowMicroseconds() - released) / 1e6
        #expect(waited < 4, "the waiter took \(waited) s (busy timeout 60 s)")
        try Self.overwriteRecord(path: path) { words in
            for i in 0..<8 { words[i] = [Int64.max, Int64.min, -1, Int64.max - 1][i % 4] }
        }
        let db = try SharedDatabase(path: path)
        for i in 0..<3 { try db.write { try $0.execute("INSERT INTO notes(id, title) VALUES (?, 'after damage')", ["d\(i)"]) } }
        #expect(try count(db, "SELECT count(*) FROM notes") == 4)
    }

    /// Rewrites the first words of the lock file's shared record, as another process would see them.
    private static func overwriteRecord(path: String, _ change: (UnsafeMutablePointer<Int64>) -> Void) throws {
        let fd = open(path + "-write.lock", O_RDWR)
        guard fd >= 0 else { throw TestFailure("cannot open the lock file") }
        defer { close(fd) }
        guard let mapped = mmap(nil, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            throw TestFailure("cannot map the lock file")
        }
        defer { munmap(mapped, 4096) }
        change(mapped.bindMemory(to: Int64.self, capacity: 8))
    }

    /// A database whose write lock a spawned `tandem hold` holds, and a view of its queue.
    private static func heldDatabase() throws -> (TemporaryDirectory, WriteLock, Spawned) {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        do { _ = try SharedDatabase(path: path, schema: notesSchema) }
        let queue = try WriteLock(path: path + "-write.lock", databasePath: path, mode: 0o600, streakLimit: 4, timeoutMilliseconds: 0)
        let holder = try Spawned(testSupport: ["hold", path, "--seconds", "60"])
        try holder.waitForLine("locked") { $0 == "locked" }
        return (dir, queue, holder)
    }

    /// Starts a writer that waits for the lock, and returns once it holds its place in the queue
    /// (its ticket drawn and its byte locked), so that the next one queues behind it.
    private static func enqueue(path: String, id: String, queue: WriteLock) throws -> Spawned {
        let ticket = queue.ticketsDrawn
        // A long busy timeout: under load, starting the later waiters may take seconds.
        let waiter = try Spawned(testSupport: [
            "hold", path, "--seconds", "0", "--busy-timeout", "60s",
            "INSERT INTO notes(id, title) VALUES ('\(id)', (SELECT count(*) FROM notes))",
        ])
        try waitUntil("\(id) queued for the write lock (ticket \(ticket))") {
            queue.ticketsDrawn != ticket && queue.isQueued(ticket: ticket)
        }
        return waiter
    }
}
