import Foundation
import Testing
@testable import Tandem

/// An import is one transaction however large its payload: `kill -9` half way through (the
/// payload half read, rows inserted, changed and queued in the open transaction) leaves every
/// row and the upload queue as they were, releases the write lock, and the same import then
/// runs to its end.
@Suite struct ImportKillTests {
    static func element(_ n: Int, title: String) -> String {
        #"{"id":"k\#(n)","title":"\#(title) \#(n)","done":\#(n % 2)}"#
    }

    @Test func anImportKilledHalfWayLeavesTheDatabaseAsItWas() throws {
        signal(SIGPIPE, SIG_IGN)  // a write to the killed importer's pipe fails instead (children get the default back)
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(
            path: dir.path("k.db"),
            schema: Schema(tables: [
                TableSchema(name: "notes", columns: [.text("title"), .integer("done")])
            ]))
        let stored = "[" + (0..<2000).map { Self.element($0, title: "stored") }.joined(separator: ",") + "]"
        #expect(try db.importJSON(Data(stored.utf8), into: "notes").tables["notes"]?.inserted == 2000)
        func state() throws -> [String] {
            try db.fetchAll("SELECT id, title, done FROM notes ORDER BY id").map { "\($0.values)" }
                + db.uploadQueue.transactions(limit: 10).flatMap(\.entries).map(\.jsonText)
        }
        let before = try state()

        // The new payload changes every stored row and adds 20,000; its first half goes through a
        // FIFO that stays open, so the importer reads it, writes it into its transaction and
        // waits for the rest.
        let elements = (0..<22_000).map { Self.element($0, title: "imported") }
        let fifo = dir.path("payload.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let importer = try Spawned(["import", db.path, "notes", fifo, "--delete-missing"])
        var fd: Int32 = -1
        try waitUntil("the importer to open the payload") {
            fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            return fd >= 0 || !importer.isRunning
        }
        try #require(fd >= 0, "the importer stopped: \(importer.stderr)")
        defer { close(fd) }
        var half = Array(("[" + elements[..<11_000].joined(separator: ",") + ",").utf8)
        try waitUntil(timeout: 60, "the importer to read the first half") {
            if !half.isEmpty {
                let written = half.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
                if written > 0 { half.removeFirst(written) }
            }
            return half.isEmpty && Self.unread(fd) == 0 && Self.isSleeping(importer.pid)
        }
        kill(importer.pid, SIGKILL)
        #expect(try importer.wait() == 128 + SIGKILL)

        #expect(try state() == before, "a killed import changed rows or the upload queue")
        let check = try runTandem(["check", db.path])
        #expect(check.status == 0, "\(check.stdout) \(check.stderr)")
        let whole = dir.path("payload.json")
        try ("[" + elements.joined(separator: ",") + "]").write(toFile: whole, atomically: true, encoding: .utf8)
        let again = try runTandem(["import", db.path, "notes", whole, "--delete-missing"])
        #expect(again.status == 0 && again.stdout == "notes: 20000 inserted, 2000 updated, 0 deleted, 0 unchanged", "\(again.stderr)")
        #expect(try db.uploadQueue.pendingCount() == 2000 + 22_000)
    }

    /// Bytes written to the pipe and not yet read.
    static func unread(_ fd: Int32) -> Int32 {
        var count: Int32 = 0
        return ioctl(fd, UInt(FIONREAD), &count) == 0 ? count : -1
    }

    /// True while every thread of the process sleeps (the importing one blocked in its read).
    static func isSleeping(_ pid: pid_t) -> Bool {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"), !threads.isEmpty else { return false }
        return threads.allSatisfy { thread in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            return stat[stat.index(close, offsetBy: 2)] == "S"
        }
    }
}
