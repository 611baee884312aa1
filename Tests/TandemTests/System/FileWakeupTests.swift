import Foundation
import Testing
@testable import Tandem

/// The inotify wake-up of `<db>-notify`: woken by reads of the file (each commit's signal), not
/// by writes to the database's other files beside it, and still woken after the file is created
/// late or replaced.
@Suite struct FileWakeupTests {
    private static func makeFile(_ path: String) throws -> Int32 {
        try FileWakeup.openForSignalling(path: path, mode: 0o600)
    }

    /// Signals through `fd` and expects `wakeup` to report the change.
    private static func expectSignalWakes(_ wakeup: FileWakeup, through fd: Int32, sourceLocation: SourceLocation = #_sourceLocation) {
        FileWakeup.signal(fd: fd)
        #expect(wakeup.wait(timeoutMilliseconds: 5000) == .changed, sourceLocation: sourceLocation)
    }

    @Test func aSignalWakesTheWaiter() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db-notify")
        let fd = try Self.makeFile(path)
        defer { close(fd) }
        let wakeup = try FileWakeup(path: path)
        #expect(wakeup.unavailableReason == nil)
        Self.expectSignalWakes(wakeup, through: fd)
    }

    /// About ten `pwrite`s to the `-wal` per commit used to wake every watcher of the directory.
    @Test func writesToOtherFilesInTheDirectoryQueueNothing() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db-notify")
        let fd = try Self.makeFile(path)
        defer { close(fd) }
        let wal = open(dir.path("a.db-wal"), O_RDWR | O_CREAT, 0o600)
        #expect(wal >= 0)
        defer { close(wal) }
        let wakeup = try FileWakeup(path: path)
        var page = [UInt8](repeating: 7, count: 4096)
        for i in 0..<100 { #expect(pwrite(wal, &page, page.count, off_t(i * 4096)) == 4096) }
        var ignored = [UInt8](repeating: 0, count: 16)
        _ = pread(wal, &ignored, ignored.count, 0)
        #expect(!wakeup.hasQueuedEvents, "writes to a.db-wal queued inotify events for the watcher of a.db-notify")
        Self.expectSignalWakes(wakeup, through: fd)
    }

    /// A watcher that starts before the file exists (a reader opening before any writer).
    @Test func aFileCreatedAfterTheWatcherStartedWakesIt() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db-notify")
        let wakeup = try FileWakeup(path: path)
        let fd = try Self.makeFile(path)
        defer { close(fd) }
        #expect(wakeup.wait(timeoutMilliseconds: 5000) == .changed)  // the creation
        Self.expectSignalWakes(wakeup, through: fd)
    }

    /// A file replaced under the name (renamed over it): signals through the new file still wake.
    @Test func aReplacedFileStillWakesTheWaiter() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db-notify")
        let old = try Self.makeFile(path)
        defer { close(old) }
        let wakeup = try FileWakeup(path: path)
        let fresh = try Self.makeFile(dir.path("new-notify"))
        defer { close(fresh) }
        #expect(rename(dir.path("new-notify"), path) == 0)
        #expect(wakeup.wait(timeoutMilliseconds: 5000) == .changed)  // the rename
        while wakeup.hasQueuedEvents { _ = wakeup.wait(timeoutMilliseconds: 0) }
        Self.expectSignalWakes(wakeup, through: fresh)
    }
}
