import Foundation
import Synchronization
import Testing
@testable import Tandem

/// A process's own commits reach its change handlers once, on the committing thread: its
/// observer, woken by any commit's wake-up (its own among them), never reports one again as
/// another process's, whenever it reads.
@Suite struct OwnCommitTests {
    /// Writes of every kind that stamps (rows through the view and in bulk, a schema change of
    /// no row, an explicit notification), in a generated order, while the observer reads after
    /// each wake-up: every change is told once, on the writing thread; only the other instance's
    /// closing write is told by the observer.
    @Test func ownCommitsAreToldOnceOnTheWritingThread() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: twoTables)
        let writing = Mutex<pthread_t?>(nil)
        let onWriter = Mutex(0)
        let fromObserver = Mutex<[DatabaseChange]>([])
        let othersSeen = DispatchSemaphore(value: 0)
        let token = try db.addImmediateChangeHandler { change in
            if let thread = writing.withLock({ $0 }), pthread_equal(thread, pthread_self()) != 0 {
                onWriter.withLock { $0 += 1 }
            } else if change.tables.contains("todos") {
                othersSeen.signal()
            } else {
                fromObserver.withLock { $0.append(change) }
            }
        }
        defer { token.cancel() }
        writing.withLock { $0 = pthread_self() }
        var random = SystemRandomNumberGenerator()
        let count = 1000
        for i in 0..<count {
            switch random.next() % 4 {
            case 0: try db.execute("INSERT INTO notes(title) VALUES (?)", ["n\(i)"])
            case 1: try db.write { try $0.executeOwn("CREATE TABLE plain_\(i)(x)") }
            case 2: try db.write { _ = try $0.insert(into: "notes", columns: ["title"], rows: [[.text("b\(i)")], [.text("c\(i)")]]) }
            default: try db.notifyChanged(tables: ["notes"])
            }
        }
        #expect(onWriter.withLock { $0 } == count)
        // Another instance's write: told by the observer after everything it read before.
        let other = try SharedDatabase(path: dir.path("a.db"), schema: twoTables)
        try other.execute("INSERT INTO todos(what) VALUES ('other')")
        #expect(othersSeen.wait(timeout: .now() + 10) == .success, "the other instance's write was never told")
        #expect(fromObserver.withLock { $0 }.isEmpty, "own commits told again by the observer: \(fromObserver.withLock { $0 })")
    }
}
