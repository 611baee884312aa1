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
/// writers append), and only the last few frames are left to the holder. At `synchronous=NORMAL`
/// a writer alone (see ``WriteLock/isWritingAlone``; one process writing, the usual case) leaves even
/// the first pass to that thread, from ``aloneThresholdFrames`` on, so that its commits go on
/// beside the copy and its `fsync`s instead of waiting for them (SQLite's automatic checkpoint
/// makes the committing writer wait); it waits for those passes only if the WAL reaches
/// ``thresholdFrames`` before they end. Past ``limitFrames``,
/// when checkpoints copy more slowly than writers append (a busy disk), the holder waits for a
/// running checkpoint and copies everything itself, as writers would wait for SQLite's own.
///
/// Related SQLite documentation: https://www.sqlite.org/wal.html#checkpointing and
/// https://www.sqlite.org/c3ref/wal_checkpoint_v2.html
final class Checkpointing: @unchecked Sendable {
    /// WAL frames past the last checkpoint that make a writer checkpoint after its commit:
    /// SQLite's default automatic checkpoint.
    static let thresholdFrames: Int64 = 1000
    /// WAL frames past the last checkpoint that make a writer alone (no other writer queued)
    /// start passes on the checkpoint thread: a quarter of the threshold, so that they have
    /// copied nearly every frame by the time the WAL reaches it (a writer alone, 20,000 1-row
    /// commits: 7,000–8,000 tx/s from a quarter, 6,300–6,900 from half; an eighth no faster).
    static let aloneThresholdFrames: Int64 = thresholdFrames / 4
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
    private let whenAlone: Bool
    /// Checkpoint passes run so far on the committing writer's thread and on the checkpoint
    /// thread (for tests: a writer alone must leave every pass to the checkpoint thread).
    let passesOnWriterThread = Atomic<Int>(0), passesOnCheckpointThread = Atomic<Int>(0)
    /// Entered by every run of passes on the checkpoint thread, left when it ends.
    private let passesOnThread = DispatchGroup()
    /// True from the start of passes by a writer alone until the writer has waited for them
    /// once; used under the writer's mutex (as every method here but ``drain()`` and
    /// ``waitForPasses(milliseconds:)`` is).
    private var waitsForAlonePasses = false

    /// - Parameters:
    ///   - openConnection: opens a read-write connection configured as the writer's (its
    ///     `synchronous` setting decides the checkpoint's `fsync`s).
    ///   - whenAlone: whether a writer alone leaves its first pass to the checkpoint thread:
    ///     not at `synchronous=FULL`, where every commit waits for an `fsync` of the WAL anyway
    ///     and the checkpoint's own `fsync`s beside it delayed commits (one writer: 0.93× the
    ///     throughput, p99 1.42×, `ab-writers --synchronous full`).
    init(writeLock: WriteLock, whenAlone: Bool, openConnection: @escaping () throws -> Connection) {
        self.writeLock = writeLock
        self.whenAlone = whenAlone
        self.openConnection = openConnection
        waitNanoseconds = min(Checkpointing.maximumWaitNanoseconds, UInt64(max(0, writeLock.timeoutMilliseconds)) * 1_000_000 / 4)
    }

    /// Waits for passes still running.
    func drain() { queue.sync {} }

    /// Waits at most `milliseconds` for passes running on the checkpoint thread; true when
    /// none runs (then a checkpoint of the caller's, which SQLite lets only one connection run
    /// at a time, does not find this process's own in its way).
    func waitForPasses(milliseconds: Int32) -> Bool {
        passesOnThread.wait(timeout: .now() + .milliseconds(Int(max(0, milliseconds)))) == .success
    }

    /// Holding the lock, before `BEGIN IMMEDIATE`: copies the frames committed during the last
    /// checkpoint outside the lock, so that the transaction's first write can restart the WAL.
    func beforeTransaction(on connection: Connection) {
        let frames = writeLock.walFramesCommitted
        let atLimit = frames >= max(Checkpointing.limitFrames, writeLock.checkpointWaitFrames)
        // Passes this writer started while alone still copy (or have just ended): wait for them
        // once, then copy the rest below, so that the WAL restarts near the threshold. Not once
        // other writers want the lock: they would wait too (the limit still holds the WAL).
        let forAlonePasses = frames >= Checkpointing.thresholdFrames && waitsForAlonePasses && writeLock.isWritingAlone
        guard atLimit || forAlonePasses else {
            if writeLock.checkpointCatchUpPending { catchUp(on: connection, until: 0) }
            return
        }
        // One wait in all, however many reasons to wait this hold has.
        let deadline = DispatchTime.now().uptimeNanoseconds + waitNanoseconds
        if forAlonePasses {
            waitsForAlonePasses = false
            if passesOnThread.wait(timeout: DispatchTime(uptimeNanoseconds: deadline)) == .success {
                writeLock.checkpointCatchUpPending = true
            }
        }
        if atLimit {
            if !catchUp(on: connection, until: deadline) {
                writeLock.checkpointWaitFrames = frames + Checkpointing.limitFrames
            }
        } else if writeLock.checkpointCatchUpPending {
            catchUp(on: connection, until: 0)
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
        // when its transaction began, the WAL did not restart: the next checkpoint, a threshold
        // on, tries again (retrying sooner, with a catch-up under the lock each time, measured
        // slower for the sync owner's writes).
        guard frames - copied >= Checkpointing.aloneThresholdFrames else { return }
        if whenAlone, writeLock.isWritingAlone {
            guard !passesRunning.exchange(true, ordering: .acquiring) else { return }  // passes are copying already
            writeLock.checkpointedFrames = frames  // claimed: other writers need not try meanwhile
            waitsForAlonePasses = true
            // The writer copies the rest at the threshold (above), not at once: one catch-up
            // under the lock per threshold of frames, as with passes in its own thread.
            return runPassesOnThread(after: nil, until: Checkpointing.thresholdFrames, catchingUp: false)
        }
        guard frames - copied >= Checkpointing.thresholdFrames else { return }
        writeLock.checkpointedFrames = frames  // claimed: other writers need not try meanwhile
        passesOnWriterThread.add(1, ordering: .relaxed)
        guard let first = try? connection.checkpoint(), !first.busy else { return }
        guard needsMorePasses(after: first), !passesRunning.exchange(true, ordering: .acquiring) else { return finish(first) }
        runPassesOnThread(after: first, until: Checkpointing.passesUntilFrames, catchingUp: true)
    }

    /// On the checkpoint thread (``passesRunning`` claimed by the caller): the first pass unless
    /// `first` ran already, then ``morePasses(on:after:until:)`` while needed, then ``finish(_:catchingUp:)``.
    private func runPassesOnThread(after first: Connection.CheckpointResult?, until untilFrames: Int64, catchingUp: Bool) {
        passesOnThread.enter()
        queue.async { [self] in
            defer {
                passesRunning.store(false, ordering: .releasing)
                passesOnThread.leave()
            }
            guard let connection = passConnection() else {
                if let first { finish(first, catchingUp: catchingUp) }
                return
            }
            let start: Connection.CheckpointResult
            if let first {
                start = first
            } else {
                passesOnCheckpointThread.add(1, ordering: .relaxed)
                guard let pass = try? connection.checkpoint(), !pass.busy else { return }
                start = pass
            }
            finish(needsMorePasses(after: start) ? morePasses(on: connection, after: start, until: untilFrames) : start,
                   catchingUp: catchingUp)
        }
    }

    /// True when `pass` copied every frame and writers appended more than ``catchUpFrames``
    /// meanwhile: another pass outside the lock pays.
    private func needsMorePasses(after pass: Connection.CheckpointResult) -> Bool {
        pass.copied == pass.frames && writeLock.walFramesCommitted - Int64(pass.frames) > Checkpointing.catchUpFrames
    }

    /// The passes' connection, opened on first use; on `queue` only.
    private func passConnection() -> Connection? {
        if connection == nil { connection = try? openConnection() }
        return connection
    }

    /// Passes after `first` while each finds more than ``catchUpFrames`` new frames and the WAL
    /// is under `untilFrames`; the last.
    private func morePasses(on connection: Connection, after first: Connection.CheckpointResult, until untilFrames: Int64) -> Connection.CheckpointResult {
        var last = first
        for _ in 1..<Checkpointing.passes {
            if writeLock.walFramesCommitted >= untilFrames { break }
            passesOnCheckpointThread.add(1, ordering: .relaxed)
            guard let result = try? connection.checkpoint(), !result.busy else { break }
            // This pass copied what was appended during the one before (negative: the WAL
            // restarted meanwhile).
            let appended = Int64(result.frames) - Int64(last.frames)
            last = result
            if result.copied < result.frames || appended <= Checkpointing.catchUpFrames { break }  // a reader keeps the rest
        }
        return last
    }

    /// Records how far `last` copied and, unless `catchingUp` is false, leaves the rest to the
    /// next holder of the lock.
    private func finish(_ last: Connection.CheckpointResult, catchingUp: Bool = true) {
        writeLock.checkpointedFrames = Int64(last.copied)
        if catchingUp { writeLock.checkpointCatchUpPending = true }
    }

    /// - Parameter deadline: until when to wait for a checkpoint running outside the lock, which
    ///   keeps this one from running (`DispatchTime` uptime ns; 0: do not wait, the next hold
    ///   tries again).
    /// - Returns: false when it could not run (another checkpoint still running).
    @discardableResult
    private func catchUp(on connection: Connection, until deadline: UInt64) -> Bool {
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
