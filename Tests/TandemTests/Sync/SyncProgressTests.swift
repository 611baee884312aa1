import Foundation
import Synchronization
import Testing
@testable import Tandem
@testable import TandemCLI

/// A backlog drains with progress reports, and the status says how far behind sync is.
@Suite struct SyncProgressTests {
    @Test func aDrainingBacklogReportsProgress() async throws {
        let dir = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.syncProgressInterval = .milliseconds(20)
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema, configuration: configuration)
        let count = 4000
        for i in 0..<count { try db.execute("INSERT INTO notes(id, title) VALUES (?, 'x')", ["n\(i)"]) }
        let session = try db.sync.start(url: try BackendURL("sqlite:" + dir.path("server.db")))
        let collected = Task {
            var reports: [SyncProgress] = []
            for await event in session.events { if case .progress(let progress) = event { reports.append(progress) } }
            return reports
        }
        // Progress is reported before the status that says the backlog is gone is written.
        try waitUntil(timeout: 60, "the backlog to drain") { try db.uploadQueue.pendingCount() == 0 && db.sync.status().uploadLag == .zero }
        session.stop()
        let reports = try await within(30, "the events to end after the stop") { await collected.value }
        #expect(!reports.isEmpty, "a backlog of \(count) transactions reports its progress")
        for report in reports {
            #expect(report.uploadedEntries > 0 && report.uploadedEntries + report.pendingEntries <= count && report.elapsed > .zero, "\(report)")
        }
        #expect(reports.map(\.uploadedEntries) == reports.map(\.uploadedEntries).sorted(), "progress only moves forward")
        let line = AppCommand.jsonLine(.progress(try #require(reports.last)))
        #expect(line.contains(#""event":"progress""#) && line.contains(#""uploaded_entries":"#) && line.contains(#""pending_entries":"#), "\(line)")
    }
}
