import Foundation
import Synchronization
import Testing
@testable import Tandem

@Suite struct StartupRaceTests {
    /// Two apps start together (at one CLOCK_MONOTONIC instant) on two clients of one new
    /// backend; a row written on A as soon as both own sync reaches B, every round.
    @Test func aRowWrittenRightAfterTwoAppsStartReachesTheOtherClient() throws {
        for round in 0..<6 {
            let f = try SyncFixture()
            let startAt = String(nowMicroseconds() + 150_000)
            let apps = try [f.a, f.b].map { db in
                try Spawned(["app", db.path, "--backend", f.backendURL, "--json"], environment: ["TANDEM_START_AT_US": startAt])
            }
            for app in apps { try app.waitForLine("became_owner") { $0.contains("became_owner") } }
            #expect(try runTandem(["exec", f.a.path, "INSERT INTO notes(id, title) VALUES ('x', ?)", "round \(round)"]).status == 0)
            try waitUntil(timeout: 5, "round \(round): the row on B") { try count(f.b, "SELECT count(*) FROM notes") == 1 }
            for app in apps { app.signal(SIGTERM); #expect(try app.wait() == 0) }
        }
    }
}
