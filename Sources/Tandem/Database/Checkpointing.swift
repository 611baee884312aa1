import Dispatch
import Foundation
import Synchronization

/// Tandem's checkpoints, which replace SQLite's automatic checkpoint (run inside `COMMIT`, so
/// under Tandem's write lock, holding every writer up).
///
/// After a commit, with the lock released, the writer checkpoints once the WAL holds
/// ``thresholdFrames`` frames more than the last checkpoint of any Tandem writer copied. Frames
/// other writers append meanwhile keep the WAL from restarting (SQLite restarts it only when a
/// write transaction begins with every frame copied), so the next holder of the lock copies them
/// before its transaction (``beforeTransaction(on:)``), and every writer waits for that copy and
/// its two `fsync`s, which take longer the more frames there are. So while the last pass found
/// more than ``catchUpFrames`` new frames, further passes run outside the lock on a connection
/// and thread of their own (each shorter than the one before while checkpoints copy faster than
/// writers append), and only the last few frames are left to the holder. Past ``limitFrames``,
/// when checkpoints copy more slowly than writers append (a busy disk), the holder waits for a
/// running checkpoint and copies everything itself, as writers would wait for SQLite's own.
///
/// Related SQLite documentation: https://www.sqlite.org/wal.html#checkpointing and
/// https://www.sqlite.org/c3ref/wal_checkpoint_v2.html
final class Checkpointing: @unchecked Sendable {
    /// WAL frames past the last checkpoint that make a writer checkpoint after its commit:
    /// SQLite's default automatic checkpoint.
    static let thresholdFrames: Int64 = 1000
    /// WAL frames past which the holder of the lock checkpoints before its transaction, waiting
    /// (at most ``maximumWaitNanoseconds``) for a checkpoint running outside the lock to end.
    static let limitFrames: Int64 = 3 * thresholdFrames
    /// Longest the holder of the lock waits for a checkpoint outside the lock (a checkpoint of
    /// 3,000 frames took up to 77 ms on a busy disk): 100 ms, or a quarter of the busy timeout if
    /// that is shorter, so that writers queued behind the holder, even with a busy timeout of a
    /// few hundred milliseconds, stay inside it. Past it the transaction goes on, and holders
    /// wait again only once the WAL has grown by another ``limitFrames``, so a checkpointer that
    /// never ends (its process stopped by SIGSTOP, say) costs one wait per 3,000 frames, not one
    /// per commit.
    static let maximumWaitNanoseconds: UInt64 = 100_000_000
    private let waitNanoseconds: UInt64
    /// New frames a pass outside the lock may leave for the holder of the lock to copy.
    static let catchUpFrames: Int64 = 32
    /// Most passes outside the lock after one commit.
    static let passes = 8
    /// WAL frames at which passes stop and leave the rest to the holder, when writers append
    /// nearly as fast as passes copy (each pass's `fsync` of the WAL flushes what was appended
    /// during the one before, so passes shorten slowly): the WAL then restarts near this size,
    /// below ``limitFrames``.
    static let passesUntilFrames: Int64 = 2 * thresholdFrames

    private let writeLock: WriteLock
    private let openConnection: () throws -> Connection
    private let queue = DispatchQueue(label: "Tandem checkpoints", qos: .utility)
    /// The passes' own connection, opened on first use; used on `queue` only.
    private var connection: Connection?
    private let passesRunning = Atomic<Bool>(false)

    /// - Parameter openConnection: opens a read-write connection configured as the writer's
    ///   (its `synchronous` setting decides the checkpoint's `fsync`s).
    init(writeLock: WriteLock, openConnection: @escaping () throws -> Connection) {
        self.writeLock = writeLock
        self.openConnection = openConnection
        waitNanoseconds = min(Checkpointing.maximumWaitNanoseconds, UInt64(max(0, writeLock.timeoutMilliseconds)) * 1_000_000 / 4)
    }

    /// Waits for passes still running.
    func drain() { queue.sync {} }

    /// Holding the lock, before `BEGIN IMMEDIATE`: copies the frames committed during the last
    /// checkpoint outside the lock, so that the transaction's first write can restart the WAL.
    func beforeTransaction(on connection: Connection) {
        let frames = writeLock.walFramesCommitted
        if frames >= max(Checkpointing.limitFrames, writeLock.checkpointWaitFrames) {
            if !catchUp(on: connection, waiting: waitNanoseconds) {
                writeLock.checkpointWaitFrames = frames + Checkpointing.limitFrames
            }
        } else if writeLock.checkpointCatchUpPending {
            catchUp(on: connection, waiting: 0)
        }
    }

    /// Holding the lock, after a commit that wrote frames (`connection.walFrames` is its WAL size).
    func committed(on connection: Connection) {
        writeLock.walFramesCommitted = Int64(connection.walFrames)
    }

    /// After the lock is released: checkpoints if due (`connection.walFrames` is this commit's),
    /// then leaves the passes for the frames appended meanwhile to the checkpoint thread.
    func afterCommit(on connection: Connection) {
        let frames = Int64(connection.walFrames)
        var copied = writeLock.checkpointedFrames
        if frames < copied { copied = 0 }  // the WAL restarted since (or is about to: 0)
        // If the catch-up copied everything but a reader of another process still used the WAL
        // when its transaction began, the WAL did not restart: the next checkpoint, 1,000 frames
        // on, tries again (retrying sooner, with a catch-up under the lock each time, measured
        // slower for the sync owner's writes).
        guard frames - copied >= Checkpointing.thresholdFrames else { return }
        writeLock.checkpointedFrames = frames  // claimed: other writers need not try meanwhile
        guard let first = try? connection.checkpoint(), !first.busy else { return }
        let appended = writeLock.walFramesCommitted - Int64(first.frames)
        guard first.copied == first.frames, appended > Checkpointing.catchUpFrames,
              !passesRunning.exchange(true, ordering: .acquiring) else {
            finish(first)
            return
        }
        queue.async { [self] in
            defer { passesRunning.store(false, ordering: .releasing) }
            if self.connection == nil { self.connection = try? openConnection() }
            guard let passes = self.connection else { return finish(first) }
            finish(morePasses(on: passes, after: first))
        }
    }

    /// Passes after `first` while each finds more than ``catchUpFrames`` new frames and the WAL
    /// is under ``passesUntilFrames``; the last.
    private func morePasses(on connection: Connection, after first: Connection.CheckpointResult) -> Connection.CheckpointResult {
        var last = first
        for _ in 1..<Checkpointing.passes {
            if writeLock.walFramesCommitted >= Checkpointing.passesUntilFrames { break }
            guard let result = try? connection.checkpoint(), !result.busy else { break }
            // This pass copied what was appended during the one before (negative: the WAL
            // restarted meanwhile).
            let appended = Int64(result.frames) - Int64(last.frames)
            last = result
            if result.copied < result.frames || appended <= Checkpointing.catchUpFrames { break }  // a reader keeps the rest
        }
        return last
    }

    private func finish(_ last: Connection.CheckpointResult) {
        writeLock.checkpointedFrames = Int64(last.copied)
        writeLock.checkpointCatchUpPending = true
    }

    /// - Parameter waiting: how long to wait for a checkpoint running outside the lock, which
    ///   keeps this one from running (ns; 0: do not wait, the next hold tries again).
    /// - Returns: false when it could not run (another checkpoint still running).
    @discardableResult
    private func catchUp(on connection: Connection, waiting: UInt64) -> Bool {
        let deadline = DispatchTime.now().uptimeNanoseconds + waiting
        var attempt = try? connection.checkpoint()
        while let result = attempt, result.busy, DispatchTime.now().uptimeNanoseconds < deadline {
            var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)  // a checkpoint takes milliseconds
            nanosleep(&pause, nil)
            attempt = try? connection.checkpoint()
        }
        guard let result = attempt, !result.busy else { return false }  // the next hold tries
        writeLock.checkpointCatchUpPending = false
        writeLock.checkpointWaitFrames = 0
        // Everything copied, and no Tandem writer can append before this transaction's first
        // write restarts the WAL (unless a reader still needs it: then the next checkpoint retries).
        writeLock.checkpointedFrames = result.copied < result.frames ? Int64(result.copied) : 0
        return true
    }
}
