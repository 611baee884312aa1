import Foundation
import Synchronization
import Testing
@testable import Tandem

@Suite struct CheckpointTests {
    @Test func truncateCheckpointEmptiesTheWAL() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        for i in 0..<50 { try db.execute("INSERT INTO notes(title) VALUES (?)", ["row \(i)"]) }
        #expect(db.walSize() > 0)
        let result = try db.checkpoint(.truncate)
        #expect(!result.busy)
        #expect(db.walSize() == 0)
        #expect(try count(db, "SELECT count(*) FROM notes") == 50)
    }

    /// Tandem replaces SQLite's automatic checkpoint (run inside COMMIT, under Tandem's write
    /// lock) with one run after the lock is released; the WAL must still restart every
    /// 1,000 frames or so, as with SQLite's own.
    @Test func commitsKeepTheWALBoundedWithoutAnOwner() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let title = String(repeating: "x", count: 3000)
        for _ in 0..<3000 { try db.execute("INSERT INTO notes(title) VALUES (?)", [title]) }
        // 3,000 commits write over 9,000 frames; a restart at about 1,000 frames (the threshold
        // plus a few commits' frames) keeps the file near 1,000 frames of 4 KiB + 24 bytes, after its
        // 32-byte header.
        let frame: Int64 = 4096 + 24
        #expect(db.walSize() > 0)
        #expect(db.walSize() <= 32 + 1_100 * frame, "WAL is \(db.walSize() / frame) frames after 3000 commits: the WAL did not restart at the threshold")
        #expect(try count(db, "SELECT count(*) FROM notes") == 3000)
    }

    /// Writers of several processes, never pausing: frames appended while one of them
    /// checkpoints must not keep the WAL from restarting (the checkpointing writer copies them
    /// at its next hold of the lock).
    @Test func concurrentWritersKeepTheWALBounded() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        do { _ = try makeStressDatabase(path) }
        let writers = try (0..<4).map { w in try Spawned(["stress-writer", path, "--writer", String(w), "--transactions", "1500"]) }
        for writer in writers { #expect(try writer.wait() == 0, "\(writer.stderr)") }
        let db = try SharedDatabase(path: path)
        let frame: Int64 = 4096 + 24
        // 6,000 commits of about 5 frames: 30,000 frames without restarts.
        #expect(db.walSize() <= 4_000 * frame, "WAL is \(db.walSize() / frame) frames after 6000 commits of 4 processes")
        #expect(try count(db, "SELECT count(*) FROM stress") == 6000)
    }

    /// Short-lived writers (one insert each, three at a time): frames committed while one of them
    /// checkpoints are copied by whichever writer holds the lock next, since the one that
    /// checkpointed exits; otherwise the WAL would never restart and grow by about 1,000 frames
    /// with each overlapped checkpoint.
    @Test func shortLivedWritersKeepTheWALBounded() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let title = String(repeating: "y", count: 20_000)
        for _ in 0..<200 {
            let writers = try (0..<3).map { _ in try Spawned(["exec", db.path, "--quiet", "INSERT INTO notes(title) VALUES (?)", title]) }
            for writer in writers { #expect(try writer.wait() == 0, "\(writer.stderr)") }
        }
        // 600 commits of about 6 frames: 3,600 frames. Restarts keep the file near 1,000 frames;
        // one that a reader of another process prevented is retried 1,000 frames later. Without
        // the catch-up by the next holder the file passed 7,000 frames.
        let frame: Int64 = 4096 + 24
        #expect(db.walSize() <= 32 + 3_500 * frame, "WAL is \(db.walSize() / frame) frames after 600 commits of short-lived writers")
        #expect(try count(db, "SELECT count(*) FROM notes") == 600)
    }

    /// A checkpoint that copies more slowly than writers append (here: one that never ends,
    /// SQLite's checkpoint lock held by this test as a checkpointer of another process would hold
    /// it) must hold writers up once the WAL reaches its limit, as SQLite's automatic checkpoint
    /// does, instead of letting the WAL grow without bound. Once the checkpoint ends, the next
    /// holder copies everything and the WAL restarts.
    @Test func aSlowCheckpointHoldsWritersUpAtTheWALLimit() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        do { _ = try makeStressDatabase(path) }
        // A process that keeps the database open, so that the writer opens a WAL index it need
        // not rebuild (rebuilding takes the checkpoint lock).
        let watcher = try Spawned(["watch", path, "SELECT 1"])
        defer { kill(watcher.pid, SIGKILL) }
        try watcher.waitForLine("the watcher's first result") { _ in true }
        // SQLite's checkpoint lock: byte 121 of the -shm file (https://www.sqlite.org/walformat.html#the_wal_index_file_format).
        // Taken by a descriptor of this process, which has no connection to the file open.
        let shm = open(path + "-shm", O_RDWR)
        #expect(shm >= 0)
        var region = flock(l_type: Int16(F_WRLCK), l_whence: Int16(SEEK_SET), l_start: 121, l_len: 1, l_pid: 0)
        #expect(fcntl(shm, F_SETLK, &region) == 0, "could not take SQLite's checkpoint lock: errno \(errno)")
        // 1,500 commits of about 5 frames: 7,500 frames unless writers wait at the limit.
        let writer = try Spawned(["stress-writer", path, "--writer", "0", "--transactions", "1500"])
        let waited = try writer.waitForLine(timeout: 60, "a commit that waited 0.3 s for the checkpoint") { line in
            let fields = line.split(separator: " ").compactMap { Int64($0) }
            return fields.count == 3 && fields[2] - fields[1] > 300_000
        }
        let frame: Int64 = 4096 + 24
        var wal = stat()
        #expect(stat(path + "-wal", &wal) == 0)
        let walAtLimit = Int64(wal.st_size) / frame
        close(shm)  // releases the lock
        #expect(try writer.wait() == 0, "\(writer.stderr)")
        #expect(walAtLimit <= Checkpointing.limitFrames + 20, "WAL was \(walAtLimit) frames when a commit (\(waited.text)) waited for the checkpoint")
        let db = try SharedDatabase(path: path)
        #expect(db.walSize() <= (Checkpointing.limitFrames + 20) * frame, "WAL is \(db.walSize() / frame) frames after the checkpoint ended")
        #expect(try count(db, "SELECT count(*) FROM stress") == 1500)
    }
}
