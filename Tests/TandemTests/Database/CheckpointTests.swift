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

    /// A checkpoint asked for right after a writer alone started passes on the checkpoint
    /// thread waits for them instead of finding SQLite's checkpoint lock taken (busy at once:
    /// SQLite takes that lock without the busy handler).
    @Test func aTruncateCheckpointWaitsForTheWritersOwnPasses() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        for round in 0..<20 {
            // About 330 frames: past the point where a writer alone starts passes.
            for i in 0..<60 { try db.execute("INSERT INTO notes(title) VALUES (?)", ["round \(round) row \(i)"]) }
            let result = try db.checkpoint(.truncate)
            #expect(!result.busy, "round \(round): \(result)")
            #expect(db.walSize() == 0, "round \(round)")
        }
        #expect(try count(db, "SELECT count(*) FROM notes") == 1200)
    }

    /// Tandem replaces SQLite's automatic checkpoint (run inside COMMIT, under Tandem's write
    /// lock) with one run after the lock is released; the WAL must still restart every
    /// 1,000 frames or so, as with SQLite's own.
    @Test func commitsKeepTheWALBoundedWithoutAnOwner() throws {
        let (dir, db) = try threeThousandLargeCommits()
        // 3,000 commits write over 9,000 frames; a restart at about 1,000 frames (the threshold
        // plus a few commits' frames) keeps the file near 1,000 frames of 4 KiB + 24 bytes, after its
        // 32-byte header.
        #expect(db.walSize() > 0)
        try expectTheWALRestartedAtTheThreshold(db)
        #expect(try count(db, "SELECT count(*) FROM notes") == 3000)
        withExtendedLifetime(dir) {}
    }

    /// A writer alone leaves every checkpoint pass, the first included, to the checkpoint
    /// thread, so that its commits go on beside the copy and its `fsync`s; the WAL still
    /// restarts near the threshold (it waits for the passes there if they have not ended).
    @Test func aWriterAloneLeavesItsCheckpointsToTheCheckpointThread() throws {
        let (dir, db) = try threeThousandLargeCommits()
        let checkpointing = try #require(db.writer?.checkpointing)
        checkpointing.drain()
        #expect(checkpointing.passesOnWriterThread.load(ordering: .relaxed) == 0)
        #expect(checkpointing.passesOnCheckpointThread.load(ordering: .relaxed) >= 9, "over 9,000 frames need at least 9 passes")
        try expectTheWALRestartedAtTheThreshold(db)
        withExtendedLifetime(dir) {}
    }

    /// SQLite's checkpoint lock held on a new stress database at `path`, and a writer process
    /// started on it for 1,500 1-row commits.
    private static func writerBesideHeldCheckpoint(_ path: String) throws -> (HeldCheckpoint, Spawned) {
        let checkpoint = try HeldCheckpoint(path: path)
        do {
            return (checkpoint, try Spawned(["stress-writer", path, "--writer", "0", "--transactions", "1500"]))
        } catch {
            checkpoint.end()
            throw error
        }
    }

    /// The WAL after ``threeThousandLargeCommits()`` restarted near the threshold: at most 1,100
    /// frames. The writer waits for a checkpoint outside the lock at most 100 ms
    /// (``CheckpointPolicy/maximumWaitNanoseconds``); on a loaded machine such a wait may run
    /// out, and each that did lets the WAL grow by up to one more ``CheckpointPolicy/limitFrames``
    /// by design, which the bound counts.
    private func expectTheWALRestartedAtTheThreshold(_ db: SharedDatabase) throws {
        let checkpointing = try #require(db.writer?.checkpointing)
        checkpointing.drain()
        let runOut = Int64(checkpointing.waitsRunOut.load(ordering: .relaxed))
        let bound = 1_100 + runOut * CheckpointPolicy.limitFrames
        #expect(
            db.walSize() <= 32 + bound * walFrame,
            "WAL is \(db.walSize() / walFrame) frames after 3000 commits (\(runOut) waits ran out): the WAL did not restart at the threshold")
    }

    /// A WAL frame: a 4 KiB page and its 24-byte header.
    private let walFrame: Int64 = 4096 + 24

    /// A new database after 3,000 commits of one process, each of a row with a 3,000-byte title.
    private func threeThousandLargeCommits() throws -> (TemporaryDirectory, SharedDatabase) {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let title = String(repeating: "x", count: 3000)
        for _ in 0..<3000 { try db.execute("INSERT INTO notes(title) VALUES (?)", [title]) }
        return (dir, db)
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

    /// A checkpoint that copies more slowly than writers append (here: SQLite's checkpoint lock
    /// held by this test as a checkpointer of another process would hold it, until 20 ms after
    /// the WAL reached its limit) must hold writers up at the limit, as SQLite's automatic checkpoint
    /// does, instead of letting the WAL grow on. Once the checkpoint ends, the waiting holder
    /// copies everything and the WAL restarts.
    @Test func aSlowCheckpointHoldsWritersUpAtTheWALLimit() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        // 1,500 commits of about 5 frames: 7,500 frames unless writers wait at the limit.
        let (checkpoint, writer) = try Self.writerBesideHeldCheckpoint(path)
        defer { checkpoint.end() }
        try waitUntil(timeout: 60, "the WAL to reach \(Checkpointing.limitFrames) frames") { HeldCheckpoint.walFrames(path) >= Checkpointing.limitFrames }
        // The checkpoint goes on for 20 ms more, within the holder's wait (100 ms); writers that
        // did not wait would append hundreds of frames meanwhile.
        usleep(20_000)
        checkpoint.end()
        #expect(try writer.wait() == 0, "\(writer.stderr)")
        let frames = HeldCheckpoint.walFrames(path)
        #expect(frames <= Checkpointing.limitFrames + 20, "WAL is \(frames) frames: writers went on past the limit while a checkpoint ran")
        let db = try SharedDatabase(path: path)
        #expect(try count(db, "SELECT count(*) FROM stress") == 1500)
    }

    /// A checkpoint that never ends (its process stopped, say) costs writers one wait per
    /// 3,000 frames the WAL grows, not one per commit: 1,500 commits of about 5 frames wait two
    /// or three times (at most 10 here, should a busy machine stall a commit as long), not about
    /// 900 times, and every commit succeeds.
    @Test func aCheckpointThatNeverEndsCostsOneWaitPerWALLimit() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let (checkpoint, writer) = try Self.writerBesideHeldCheckpoint(path)
        defer { checkpoint.end() }
        #expect(try writer.wait(timeout: 60) == 0, "\(writer.stderr)")
        let waits = writer.output.filter(HeldCheckpoint.waited)
        #expect(writer.output.count == 1500)
        #expect((1...10).contains(waits.count), "\(waits.count) commits waited for the checkpoint (WAL \(HeldCheckpoint.walFrames(path)) frames)")
    }
}

/// SQLite's checkpoint lock, byte 121 of the `-shm` file
/// (https://www.sqlite.org/walformat.html#the_wal_index_file_format), held by this process as
/// a checkpointer of another process holds it while it runs, on a stress database it creates.
/// A watcher keeps the database open meanwhile, so that writers open a WAL index they need not
/// rebuild (rebuilding takes the checkpoint lock). This process has no connection to the file
/// open while it holds the lock (closing one would drop the lock: POSIX record locks).
private final class HeldCheckpoint {
    private let watcher: Spawned
    private var shm: Int32
    private var ended = false

    init(path: String) throws {
        do { _ = try makeStressDatabase(path) }
        watcher = try Spawned(["watch", path, "SELECT 1"])
        try watcher.waitForLine("the watcher's first result") { _ in true }
        shm = open(path + "-shm", O_RDWR)
        var region = flock(l_type: Int16(F_WRLCK), l_whence: Int16(SEEK_SET), l_start: 121, l_len: 1, l_pid: 0)
        guard shm >= 0, fcntl(shm, F_SETLK, &region) == 0 else {
            throw TestFailure("could not take SQLite's checkpoint lock of \(path): errno \(errno)")
        }
    }

    /// Releases the lock (by closing the descriptor) and stops the watcher.
    func end() {
        guard !ended else { return }
        ended = true
        close(shm)
        kill(watcher.pid, SIGKILL)
    }

    /// A `stress-writer` line (`<i> <start µs> <commit µs>`) of a commit that took most of the
    /// holder's wait for a checkpoint (100 ms at the default busy timeout).
    static func waited(_ line: String) -> Bool {
        let fields = line.split(separator: " ").compactMap { Int64($0) }
        return fields.count == 3 && fields[2] - fields[1] >= Int64(Checkpointing.maximumWaitNanoseconds / 1000) * 9 / 10
    }

    /// The `-wal` file's size in frames of 4 KiB pages.
    static func walFrames(_ path: String) -> Int64 {
        var wal = stat()
        guard stat(path + "-wal", &wal) == 0 else { return -1 }
        return Int64(wal.st_size) / (4096 + 24)
    }
}
