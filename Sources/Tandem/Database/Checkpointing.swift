import Dispatch
import Foundation
import Synchronization

/// Tandem's checkpoints, which replace SQLite's automatic checkpoint (run inside `COMMIT`, so
/// under Tandem's write lock, holding every writer up).
///
/// After a commit, with the lock released, the writer checkpoints once the WAL holds
/// ``CheckpointPolicy/thresholdFrames`` frames more than the last checkpoint of any Tandem writer
/// copied. Frames other writers append meanwhile keep the WAL from restarting (SQLite restarts it
/// only when a write transaction begins with every frame copied), so the next holder of the lock
/// copies them before its transaction (``beforeTransaction(on:)``), and every writer waits for that
/// copy and its two `fsync`s, which take longer the more frames there are. So while the last pass
/// found more than ``CheckpointPolicy/catchUpFrames`` new frames, further passes run outside the
/// lock on a connection and thread of their own (each shorter than the one before while checkpoints
/// copy faster than writers append), and only the last few frames are left to the holder. At
/// `synchronous=NORMAL` a writer alone (see ``WriteLock/isWritingAlone``; one process writing, the
/// usual case) leaves even the first pass to that thread, from
/// ``CheckpointPolicy/aloneThresholdFrames`` on, so that its commits go on beside the copy and its
/// `fsync`s instead of waiting for them (SQLite's automatic checkpoint makes the committing writer
/// wait); it waits for those passes only if the WAL reaches ``CheckpointPolicy/thresholdFrames``
/// before they end. Past ``CheckpointPolicy/limitFrames``, when checkpoints copy more slowly than
/// writers append (a busy disk), the holder waits for a running checkpoint and copies everything
/// itself, as writers would wait for SQLite's own.
///
/// Every decision (when, where, whether to wait) is ``CheckpointPolicy``'s; this class gathers
/// the facts for it, runs the checkpoints and waits it decides on, and keeps what the lock file's
/// ``WriteLockRecord`` says about checkpoints current.
///
/// Related SQLite documentation: https://www.sqlite.org/wal.html#checkpointing and
/// https://www.sqlite.org/c3ref/wal_checkpoint_v2.html
final class Checkpointing: @unchecked Sendable {
    // Invariant: every method but ``drain()`` and ``waitForPasses(milliseconds:)`` is called
    // under the writer's mutex (so ``ownPassesUnwaited`` needs no lock of its own, and only one
    // thread at a time sets ``passesRunning``); `connection` is used on `queue` only.

    /// WAL frames past which the holder of the lock waits for a running checkpoint (see
    /// ``CheckpointPolicy/limitFrames``).
    static let limitFrames = CheckpointPolicy.limitFrames
    /// Longest one hold of the lock waits (see ``CheckpointPolicy/maximumWaitNanoseconds``).
    static let maximumWaitNanoseconds = CheckpointPolicy.maximumWaitNanoseconds

    let policy: CheckpointPolicy
    private let writeLock: WriteLock
    /// The lock file's shared record: how far checkpoints got, whether a catch-up is pending.
    private var record: WriteLockRecord.Shared { writeLock.record }
    private let openConnection: () throws -> Connection
    private let queue = DispatchQueue(label: "Tandem checkpoints", qos: .utility)
    /// The passes' own connection, opened on first use; used on `queue` only.
    private var connection: Connection?
    private let passesRunning = Atomic<Bool>(false)
    /// Checkpoint passes run so far on the committing writer's thread and on the checkpoint
    /// thread (for tests: a writer alone must leave every pass to the checkpoint thread).
    let passesOnWriterThread = Atomic<Int>(0), passesOnCheckpointThread = Atomic<Int>(0)
    /// Holds of the lock whose wait for a checkpoint outside it reached its deadline (for tests:
    /// each lets the WAL grow by up to one more ``CheckpointPolicy/limitFrames``).
    let waitsRunOut = Atomic<Int>(0)
    /// Entered by every run of passes on the checkpoint thread, left when it ends.
    private let passesOnThread = DispatchGroup()
    /// True from the start of passes by a writer alone until the writer has waited for them once.
    private var ownPassesUnwaited = false

    /// - Parameters:
    ///   - policy: when and where to checkpoint (see ``CheckpointPolicy/init(synchronous:busyTimeoutMilliseconds:)``).
    ///   - openConnection: opens a read-write connection configured as the writer's (its
    ///     `synchronous` setting decides the checkpoint's `fsync`s).
    init(writeLock: WriteLock, policy: CheckpointPolicy, openConnection: @escaping () throws -> Connection) {
        self.writeLock = writeLock
        self.policy = policy
        self.openConnection = openConnection
    }

    /// Waits for passes still running.
    func drain() { queue.sync {} }

    /// Waits for passes still running and closes their connection.
    func close(checkpointing: Bool = true) {
        queue.sync {
            connection?.close(checkpointing: checkpointing)
            connection = nil
        }
    }

    /// Waits at most `milliseconds` for passes running on the checkpoint thread; true when
    /// none runs (then a checkpoint of the caller's, which SQLite lets only one connection run
    /// at a time, does not find this process's own in its way).
    func waitForPasses(milliseconds: Int32) -> Bool {
        passesOnThread.wait(timeout: .now() + .milliseconds(Int(max(0, milliseconds)))) == .success
    }

    /// Holding the lock, before `BEGIN IMMEDIATE`: copies the frames committed during the last
    /// checkpoint outside the lock, so that the transaction's first write can restart the WAL.
    func beforeTransaction(on connection: Connection) {
        let facts = CheckpointPolicy.HoldFacts(
            walFrames: record.walFramesCommitted, waitFrames: record.checkpointWaitFrames,
            catchUpPending: record.catchUpPending,
            // A byte-lock scan at worst: asked only when it can matter.
            writingAlone: ownPassesUnwaited && writeLock.isWritingAlone, ownPassesUnwaited: ownPassesUnwaited)
        switch policy.beforeTransaction(facts) {
        case .nothing:
            return
        case .catchUp:
            catchUp(on: connection, until: 0)
        case .waitForOwnPasses:
            let deadline = DispatchTime.now().uptimeNanoseconds + policy.waitNanoseconds
            waitForOwnPasses(until: deadline)
            if record.catchUpPending { catchUp(on: connection, until: 0) }
        case .catchUpAtLimit(let waitingForOwnPasses, let waitFrames):
            let deadline = DispatchTime.now().uptimeNanoseconds + policy.waitNanoseconds
            if waitingForOwnPasses { waitForOwnPasses(until: deadline) }
            if !catchUp(on: connection, until: deadline) {
                record.checkpointWaitFrames = waitFrames
                waitsRunOut.add(1, ordering: .relaxed)
            }
        }
    }

    /// Waits until `deadline` (uptime ns) for the passes this writer started while alone; when
    /// they have ended, their frames are left for a catch-up.
    private func waitForOwnPasses(until deadline: UInt64) {
        ownPassesUnwaited = false
        if passesOnThread.wait(timeout: DispatchTime(uptimeNanoseconds: deadline)) == .success {
            record.catchUpPending = true
        } else {
            waitsRunOut.add(1, ordering: .relaxed)
        }
    }

    /// Holding the lock, after a commit that wrote frames (`connection.walFrames` is its WAL size).
    func committed(on connection: Connection) {
        record.walFramesCommitted = Int64(connection.walFrames)
    }

    /// After the lock is released: checkpoints if due (`connection.walFrames` is this commit's),
    /// then leaves the passes for the frames appended meanwhile to the checkpoint thread.
    func afterCommit(on connection: Connection) {
        let frames = Int64(connection.walFrames)
        let facts = CheckpointPolicy.CommitFacts(
            walFrames: frames, checkpointedFrames: record.checkpointedFrames,
            writingAlone: policy.whenAlone && writeLock.isWritingAlone,
            passesRunning: passesRunning.load(ordering: .acquiring))
        switch policy.afterCommit(facts) {
        case .nothing:
            return
        case .passesOnThread(let claim):
            // Only this thread (under the writer's mutex) sets it: the claim holds what the fact said.
            guard !passesRunning.exchange(true, ordering: .acquiring) else { return }
            record.checkpointedFrames = claim  // claimed: other writers need not try meanwhile
            ownPassesUnwaited = true
            runPassesOnThread(.aloneRun())
        case .passHere(let claim):
            record.checkpointedFrames = claim  // claimed: other writers need not try meanwhile
            passesOnWriterThread.add(1, ordering: .relaxed)
            let first = Self.pass(try? connection.checkpoint())
            switch policy.afterPassHere(
                first, walFramesCommitted: record.walFramesCommitted,
                passesRunning: passesRunning.load(ordering: .acquiring))
            {
            case .nothing:
                return
            case .finish(let pass):
                finish(pass, leavingCatchUp: true)
            case .morePassesOnThread(let pass):
                guard !passesRunning.exchange(true, ordering: .acquiring) else { return finish(pass, leavingCatchUp: true) }
                runPassesOnThread(.catchUpRun(after: pass))
            }
        }
    }

    /// A pass as the policy sees it: nil when it did not run (busy, or failed).
    private static func pass(_ result: Connection.CheckpointResult?) -> CheckpointPolicy.Pass? {
        guard let result, !result.busy else { return nil }
        return CheckpointPolicy.Pass(frames: Int64(result.frames), copied: Int64(result.copied))
    }

    /// On the checkpoint thread (``passesRunning`` claimed by the caller): the passes of `run`
    /// while it asks for them, then what it says to record.
    private func runPassesOnThread(_ run: CheckpointPolicy.PassRun) {
        passesOnThread.enter()
        queue.async { [self] in
            defer {
                passesRunning.store(false, ordering: .releasing)
                passesOnThread.leave()
            }
            var run = run
            var step: CheckpointPolicy.PassRun.Step
            if let connection = passConnection() {
                step = run.next(walFramesCommitted: record.walFramesCommitted)
                while step == .pass {
                    passesOnCheckpointThread.add(1, ordering: .relaxed)
                    step =
                        run.passEnded(Self.pass(try? connection.checkpoint()))
                        ?? run.next(walFramesCommitted: record.walFramesCommitted)
                }
            } else {
                step = run.connectionFailed()
            }
            switch step {
            case .finish(let last, _): finish(last, leavingCatchUp: run.leavesCatchUp)
            case .abandon, .pass: return
            }
        }
    }

    /// The passes' connection, opened on first use; on `queue` only.
    private func passConnection() -> Connection? {
        if connection == nil { connection = try? openConnection() }
        return connection
    }

    /// Records how far `last` copied and, if `leavingCatchUp`, leaves the rest to the next
    /// holder of the lock.
    private func finish(_ last: CheckpointPolicy.Pass, leavingCatchUp: Bool) {
        record.checkpointedFrames = last.copied
        if leavingCatchUp { record.catchUpPending = true }
    }

    /// - Parameter deadline: until when to wait for a checkpoint running outside the lock, which
    ///   keeps this one from running (`DispatchTime` uptime ns; 0: do not wait, the next hold
    ///   tries again).
    /// - Returns: false when it could not run (another checkpoint still running).
    @discardableResult
    private func catchUp(on connection: Connection, until deadline: UInt64) -> Bool {
        var attempt = try? connection.checkpoint()
        while let result = attempt, result.busy {
            let now = DispatchTime.now().uptimeNanoseconds
            switch policy.afterBusyCatchUp(nanosecondsLeft: deadline > now ? deadline - now : 0) {
            case .giveUp:
                return false  // the next hold tries
            case .retry(let nanoseconds):
                var pause = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
                nanosleep(&pause, nil)
                attempt = try? connection.checkpoint()
            }
        }
        guard let pass = Self.pass(attempt) else { return false }  // failed: the next hold tries
        record.catchUpPending = false
        record.checkpointWaitFrames = 0
        record.checkpointedFrames = policy.checkpointedFrames(afterCatchUp: pass)
        return true
    }
}
