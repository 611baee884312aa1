/// When Tandem's writers checkpoint, where, and how long they wait: the decisions of
/// ``Checkpointing``, as a value that does no I/O and reads no clock. ``Checkpointing`` gathers
/// the facts (the WAL's size, the lock file's ``WriteLockRecord``, whether this process writes
/// alone, the passes it runs, the time left), asks, and carries out the answer.
///
/// The decision points, in the order a write meets them:
/// 1. Holding the lock, before `BEGIN IMMEDIATE`: ``beforeTransaction(_:)``; while a catch-up
///    finds another checkpoint running: ``afterBusyCatchUp(nanosecondsLeft:)``; when it ran:
///    ``checkpointedFrames(afterCatchUp:)``.
/// 2. After the commit, the lock released: ``afterCommit(_:)``; after a first pass run on the
///    writer's thread: ``afterPassHere(_:walFramesCommitted:passesRunning:)``.
/// 3. On the checkpoint thread: a ``PassRun`` says whether to run another pass, and what to
///    record when the run ends.
///
/// ``Checkpointing`` tells the story these decisions make; each number says why it is what it is.
struct CheckpointPolicy: Equatable, Sendable {
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
    /// New frames a pass outside the lock may leave for the holder of the lock to copy.
    static let catchUpFrames: Int64 = 32
    /// Most passes outside the lock after one commit (the first included).
    static let passes = 8
    /// WAL frames at which passes stop and leave the rest to the holder, when writers append
    /// nearly as fast as passes copy (each pass's `fsync` of the WAL flushes what was appended
    /// during the one before, so passes shorten slowly): the WAL then restarts near this size,
    /// below ``limitFrames``.
    static let passesUntilFrames: Int64 = 2 * thresholdFrames
    /// How long a catch-up that found another checkpoint running pauses before it tries again
    /// (a checkpoint takes milliseconds).
    static let busyPauseNanoseconds: UInt64 = 1_000_000

    /// Whether a writer alone leaves its first pass to the checkpoint thread: at
    /// `synchronous=NORMAL` only. At `FULL`, where every commit waits for an `fsync` of the WAL
    /// anyway, the checkpoint's own `fsync`s beside it delayed commits (one writer: 0.93× the
    /// throughput, p99 1.42×, `ab-writers --synchronous full`).
    let whenAlone: Bool
    /// The longest one hold of the lock waits (all its waits share one deadline):
    /// ``maximumWaitNanoseconds``, or a quarter of the busy timeout if that is shorter.
    let waitNanoseconds: UInt64

    init(whenAlone: Bool, waitNanoseconds: UInt64) {
        self.whenAlone = whenAlone
        self.waitNanoseconds = waitNanoseconds
    }

    /// The policy of a writer with this `synchronous` setting and busy timeout (ms).
    init(synchronous: Configuration.Synchronous, busyTimeoutMilliseconds: Int32) {
        self.init(
            whenAlone: synchronous == .normal,
            waitNanoseconds: min(CheckpointPolicy.maximumWaitNanoseconds, UInt64(max(0, busyTimeoutMilliseconds)) * 1_000_000 / 4))
    }

    /// A checkpoint pass that ran. One that found another checkpoint in its way (`SQLITE_BUSY`),
    /// or failed, is no pass: nil where a pass is expected.
    struct Pass: Equatable, Sendable {
        /// Frames in the WAL when it ran.
        var frames: Int64
        /// Frames copied into the database (fewer than `frames`: a reader still needs the rest).
        var copied: Int64

        /// True when every frame was copied.
        var copiedAll: Bool { copied == frames }
    }

    // MARK: - Holding the lock, before the transaction

    /// What the holder of the lock knows before `BEGIN IMMEDIATE`.
    struct HoldFacts: Equatable, Sendable {
        /// ``WriteLockRecord/walFramesCommitted``: the WAL's size after the last commit.
        var walFrames: Int64
        /// ``WriteLockRecord/checkpointWaitFrames`` (0: the default limit).
        var waitFrames: Int64
        /// ``WriteLockRecord/catchUpPending``.
        var catchUpPending: Bool
        /// True when this process writes alone (``WriteLock/isWritingAlone``).
        var writingAlone: Bool
        /// True when this writer started passes while alone and has not waited for them yet.
        var ownPassesUnwaited: Bool
    }

    /// What the holder does before its transaction. Whatever it is, one hold waits once at
    /// most: every wait of the hold ends at one deadline, ``waitNanoseconds`` after the decision.
    enum HoldDecision: Equatable, Sendable {
        /// Nothing to copy: no catch-up pending, the WAL under its limit, no passes of this
        /// writer to wait for.
        case nothing
        /// Copy the frames committed during the last passes outside the lock, without waiting:
        /// if a checkpoint still runs, the next hold tries again.
        case catchUp
        /// This writer, alone, started passes that have not been waited for, and the WAL
        /// reached the threshold: wait for them (until the deadline; when they have ended, a
        /// catch-up is pending), then copy the rest without waiting if a catch-up is pending,
        /// so that the WAL restarts near the threshold.
        case waitForOwnPasses
        /// The WAL reached its limit: wait for this writer's own passes first if
        /// `waitingForOwnPasses`, then copy everything, trying again while a checkpoint runs
        /// until the deadline; if one still runs then, set
        /// ``WriteLockRecord/checkpointWaitFrames`` to `waitFramesIfItRunsOut`, so that holders
        /// wait again only a limit later.
        case catchUpAtLimit(waitingForOwnPasses: Bool, waitFramesIfItRunsOut: Int64)
    }

    /// Before the holder's transaction: copy, wait, both, or neither.
    func beforeTransaction(_ facts: HoldFacts) -> HoldDecision {
        let atLimit = facts.walFrames >= max(CheckpointPolicy.limitFrames, facts.waitFrames)
        // Passes this writer started while alone still copy (or have just ended): wait for them
        // once. Not once other writers want the lock: they would wait too (the limit still
        // holds the WAL).
        let forOwnPasses = facts.walFrames >= CheckpointPolicy.thresholdFrames && facts.ownPassesUnwaited && facts.writingAlone
        switch (atLimit, forOwnPasses) {
        case (true, _):
            return .catchUpAtLimit(
                waitingForOwnPasses: forOwnPasses,
                waitFramesIfItRunsOut: facts.walFrames + CheckpointPolicy.limitFrames)
        case (false, true):
            return .waitForOwnPasses
        case (false, false):
            return facts.catchUpPending ? .catchUp : .nothing
        }
    }

    /// What a catch-up that found another checkpoint running (`SQLITE_BUSY`) does next.
    enum BusyCatchUp: Equatable, Sendable {
        /// Pause this long, then try again.
        case retry(afterNanoseconds: UInt64)
        /// The deadline passed (or the catch-up may not wait): leave it to the next hold.
        case giveUp
    }

    /// - Parameter nanosecondsLeft: time left before the hold's deadline (0: none, or passed).
    func afterBusyCatchUp(nanosecondsLeft: UInt64) -> BusyCatchUp {
        nanosecondsLeft > 0 ? .retry(afterNanoseconds: CheckpointPolicy.busyPauseNanoseconds) : .giveUp
    }

    /// ``WriteLockRecord/checkpointedFrames`` after a catch-up under the lock that ran: 0 when it
    /// copied everything (no Tandem writer can append before this transaction's first write
    /// restarts the WAL), else how far it got (a reader still needs the WAL: the next
    /// checkpoint, a threshold on, retries). A catch-up that ran also clears
    /// ``WriteLockRecord/catchUpPending`` and ``WriteLockRecord/checkpointWaitFrames``.
    func checkpointedFrames(afterCatchUp pass: Pass) -> Int64 {
        pass.copied < pass.frames ? pass.copied : 0
    }

    // MARK: - After the commit, the lock released

    /// What a writer knows after its commit, the lock released.
    struct CommitFacts: Equatable, Sendable {
        /// The WAL's size after this commit.
        var walFrames: Int64
        /// ``WriteLockRecord/checkpointedFrames``.
        var checkpointedFrames: Int64
        /// True when this process writes alone (``WriteLock/isWritingAlone``).
        var writingAlone: Bool
        /// True while passes of this process run on its checkpoint thread.
        var passesRunning: Bool
    }

    /// Why a commit starts no checkpoint.
    enum NoCheckpoint: Equatable, Sendable {
        /// Fewer than ``aloneThresholdFrames`` frames past the last checkpoint.
        case belowAloneThreshold
        /// A writer alone, whose passes are copying already.
        case passesRunning
        /// Not a writer alone at `synchronous=NORMAL`, and fewer than ``thresholdFrames`` frames
        /// past the last checkpoint.
        case belowThreshold
    }

    /// What a writer does after its commit.
    enum CommitDecision: Equatable, Sendable {
        case nothing(NoCheckpoint)
        /// A writer alone: claim the checkpoint (``WriteLockRecord/checkpointedFrames`` = `claim`,
        /// so that other writers need not try meanwhile) and leave every pass, the first
        /// included, to the checkpoint thread (``PassRun/aloneRun()``); the writer copies the
        /// rest at the threshold (``HoldDecision/waitForOwnPasses``), not at once: one catch-up
        /// under the lock per threshold of frames.
        case passesOnThread(claim: Int64)
        /// Claim the checkpoint and run the first pass on this thread, then ask
        /// ``afterPassHere(_:walFramesCommitted:passesRunning:)``.
        case passHere(claim: Int64)
    }

    func afterCommit(_ facts: CommitFacts) -> CommitDecision {
        // The WAL restarted since the last checkpoint (or is about to): count from 0. If the
        // catch-up copied everything but a reader of another process still used the WAL when
        // its transaction began, the WAL did not restart: the next checkpoint, a threshold on,
        // tries again (retrying sooner, with a catch-up under the lock each time, measured
        // slower for the sync owner's writes).
        let copied = facts.walFrames < facts.checkpointedFrames ? 0 : facts.checkpointedFrames
        let pastCheckpoint = facts.walFrames - copied
        guard pastCheckpoint >= CheckpointPolicy.aloneThresholdFrames else { return .nothing(.belowAloneThreshold) }
        if whenAlone && facts.writingAlone {
            return facts.passesRunning ? .nothing(.passesRunning) : .passesOnThread(claim: facts.walFrames)
        }
        guard pastCheckpoint >= CheckpointPolicy.thresholdFrames else { return .nothing(.belowThreshold) }
        return .passHere(claim: facts.walFrames)
    }

    /// What follows a first pass run on the writer's thread.
    enum PassHereDecision: Equatable, Sendable {
        /// It did not run (busy, or failed): the claim stands, nothing else is recorded.
        case nothing
        /// Record how far it copied and leave the rest to the next holder of the lock.
        case finish(Pass)
        /// Writers appended more than ``catchUpFrames`` during it: go on with passes on the
        /// checkpoint thread (``PassRun/catchUpRun(after:)``), which end as `finish` does.
        case morePassesOnThread(after: Pass)
    }

    /// - Parameters:
    ///   - pass: the first pass, nil when it did not run.
    ///   - walFramesCommitted: ``WriteLockRecord/walFramesCommitted`` now.
    ///   - passesRunning: true while passes of this process run on its checkpoint thread.
    func afterPassHere(_ pass: Pass?, walFramesCommitted: Int64, passesRunning: Bool) -> PassHereDecision {
        guard let pass else { return .nothing }
        guard CheckpointPolicy.needsMorePasses(after: pass, walFramesCommitted: walFramesCommitted), !passesRunning else {
            return .finish(pass)
        }
        return .morePassesOnThread(after: pass)
    }

    /// True when `pass` copied every frame and writers appended more than ``catchUpFrames``
    /// meanwhile: another pass outside the lock pays.
    static func needsMorePasses(after pass: Pass, walFramesCommitted: Int64) -> Bool {
        pass.copiedAll && walFramesCommitted - pass.frames > catchUpFrames
    }

    // MARK: - On the checkpoint thread

    /// A run of passes on the checkpoint thread after one commit: whether to run another, and
    /// what to record when it ends.
    struct PassRun: Equatable, Sendable {
        /// Passes stop once the WAL holds this many frames.
        let untilFrames: Int64
        /// Whether the run's end leaves a catch-up pending for the next holder of the lock.
        let leavesCatchUp: Bool
        /// The last pass that ran (nil before the first).
        private(set) var last: Pass?
        /// Passes of this run so far, the first included (wherever it ran).
        private(set) var passes: Int

        /// The passes a writer alone starts after its commit: the first included, until the
        /// threshold; the writer copies the rest when it waits for them, so none is pending.
        static func aloneRun() -> PassRun {
            PassRun(untilFrames: CheckpointPolicy.thresholdFrames, leavesCatchUp: false, last: nil, passes: 0)
        }

        /// The passes after a first one on the writer's thread, until ``passesUntilFrames``.
        static func catchUpRun(after first: Pass) -> PassRun {
            PassRun(untilFrames: CheckpointPolicy.passesUntilFrames, leavesCatchUp: true, last: first, passes: 1)
        }

        /// What the checkpoint thread does next.
        enum Step: Equatable, Sendable {
            /// Run a pass, then report it with ``passEnded(_:)``.
            case pass
            /// Record how far `last` copied (and, if ``leavesCatchUp``, that a catch-up is
            /// pending); the run is over.
            case finish(last: Pass, RunEnd)
            /// The run is over with nothing to record (its first pass did not run).
            case abandon
        }

        /// Why a run ended.
        enum RunEnd: Equatable, Sendable {
            /// The last pass left at most ``catchUpFrames`` new frames, or a reader kept some.
            case caughtUp
            /// The WAL reached ``untilFrames``.
            case walAtLimit
            /// ``passes`` passes ran.
            case passesUsed
            /// The last pass did not run (busy or failed).
            case passFailed
            /// The thread's connection could not be opened.
            case noConnection
        }

        /// Before each pass: what to do, given ``WriteLockRecord/walFramesCommitted`` now.
        func next(walFramesCommitted: Int64) -> Step {
            guard let last else { return .pass }
            // After the first pass: go on only while writers append more than the holder should copy.
            if passes == 1, !CheckpointPolicy.needsMorePasses(after: last, walFramesCommitted: walFramesCommitted) {
                return .finish(last: last, .caughtUp)
            }
            if passes >= CheckpointPolicy.passes { return .finish(last: last, .passesUsed) }
            if walFramesCommitted >= untilFrames { return .finish(last: last, .walAtLimit) }
            return .pass
        }

        /// After a pass (nil: it did not run): the run's end, or nil to ask ``next(walFramesCommitted:)``.
        mutating func passEnded(_ pass: Pass?) -> Step? {
            guard let pass else { return last.map { .finish(last: $0, .passFailed) } ?? .abandon }
            let previous = last
            last = pass
            passes += 1
            // The first pass goes on by ``next(walFramesCommitted:)`` alone.
            guard let previous else { return nil }
            // This pass copied what was appended during the one before (negative: the WAL
            // restarted meanwhile); past it, a reader keeps the rest, or another pass does not pay.
            let appended = pass.frames - previous.frames
            if !pass.copiedAll || appended <= CheckpointPolicy.catchUpFrames { return .finish(last: pass, .caughtUp) }
            return nil
        }

        /// The thread's connection could not be opened: what to do.
        func connectionFailed() -> Step {
            last.map { .finish(last: $0, .noConnection) } ?? .abandon
        }
    }
}
