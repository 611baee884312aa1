import Foundation
import Synchronization
import Testing
@testable import Tandem

@Suite struct ExplicitChangeTests {
    /// `notifyChanged(tables:)` reaches the observers of other connections (another process's,
    /// here a second instance with its own observer) with exactly the tables it names, though no
    /// row changed, and with no help from the backstop poll.
    @Test func notifyChangedReachesOtherObservers() throws {
        let dir = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.changePollInterval = .seconds(3600)
        let db = try SharedDatabase(path: dir.path("a.db"), schema: twoTables, configuration: configuration)
        let other = try SharedDatabase(path: db.path, configuration: configuration)
        let seen = Mutex<[DatabaseChange]>([])
        let token = try other.addChangeHandler { change in seen.withLock { $0.append(change) } }
        defer { token.cancel() }
        try db.notifyChanged(tables: ["notes"])
        try waitUntil(timeout: 2, "the explicit change") { !seen.withLock { $0 }.isEmpty }
        #expect(seen.withLock { $0 }.map(\.tables) == [["notes"]])
        try db.notifyChanged(tables: [])
        try waitUntil(timeout: 2, "the explicit unknown change") { seen.withLock { $0 }.count == 2 }
        #expect(seen.withLock { $0 }.last?.isUnknown == true)
    }
}
