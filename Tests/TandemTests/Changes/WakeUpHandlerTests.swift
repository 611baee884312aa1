import Foundation
import Synchronization
import Testing
@testable import Tandem

@Suite struct WakeUpHandlerTests {
    /// Another process's commit calls a wake-up handler before the change handlers hear of it
    /// (the observer reads after the call); this process's own commits call none once the
    /// observer follows them (a first one may restart the WAL, which it cannot predict).
    @Test func anotherProcesssCommitWakesBeforeTheReadingAndOwnCommitsDoNot() throws {
        let dir = try TemporaryDirectory()
        let (db, _, changeToken) = try databaseWithoutPoll(at: dir.path("a.db"))
        defer { changeToken.cancel() }
        let events = Mutex<[String]>([])
        let wakeUps = try db.addWakeUpHandler { events.withLock { $0.append("wake-up") } }
        defer { wakeUps.cancel() }
        let changes = try db.addImmediateChangeHandler { change in
            events.withLock { $0.append(change.tables.contains("notes") ? "notes" : "other") }
        }
        defer { changes.cancel() }
        try db.write { try $0.execute("INSERT INTO todos(what) VALUES ('first')") }
        try waitUntil(timeout: 5, "the first commit's wake-up had") { events.withLock { !$0.isEmpty } || db.observer.wakeUpsPassedOver > 0 }
        let passedBefore = db.observer.wakeUpsPassedOver
        events.withLock { $0.removeAll() }
        for i in 0..<20 { try db.write { try $0.execute("INSERT INTO todos(what) VALUES (?)", ["own \(i)"]) } }
        try waitUntil(timeout: 5, "the own commits' wake-ups passed over") { db.observer.wakeUpsPassedOver > passedBefore }
        #expect(!events.withLock { $0.contains("wake-up") }, "an own commit called the wake-up handler: \(events.withLock { $0 })")
        #expect(try runTandem(["exec", db.path, "INSERT INTO notes(id, title) VALUES ('n', 'another process')"]).status == 0)
        try waitUntil(timeout: 5, "the other process's commit reaches the change handler") { events.withLock { $0.contains("notes") } }
        let seen = events.withLock { $0 }
        let wake = seen.firstIndex(of: "wake-up"), notes = seen.firstIndex(of: "notes")
        #expect(wake != nil && notes != nil && wake! < notes!, "the wake-up came first: \(seen)")
    }
}
