import Foundation
import Synchronization

/// Learns what other processes committed and tells this process's subscribers.
///
/// The database is the record: each Tandem write transaction stamps the tables it changed in
/// `ps_state` (`changed:<table>`) with a sequence number. A dedicated thread waits on the `<db>-notify` wake-up
/// (inotify on the directory) or the backstop poll interval, then reads the stamps newer than the
/// last it saw, and compares `PRAGMA data_version` to notice writers that stamp nothing.
/// Commits made by this process are delivered directly by ``localCommit(_:)``, and their stamps
/// are skipped when read back.
///
/// Related SQLite documentation: https://www.sqlite.org/pragma.html#pragma_data_version
final class ChangeObserver: @unchecked Sendable {
    // Invariant: `state` guards all mutable fields; the observer connection lives on the
    // observer thread only.
    private struct State {
        var subscribers: [UInt64: Handler] = [:]
        /// Told of each wake-up before its reading (``subscribeToWakeUps(_:)``).
        var wakeUpSubscribers: [UInt64: @Sendable () -> Void] = [:]
        var nextToken: UInt64 = 0
        var started = false
        var stopped = false
        var ledger = ChangeLedger()
        var commitCounter: WALCommitCounter?
        /// Where the WAL stood before the snapshot of the last reading: every commit up to
        /// there has been read.
        var read: WALCommitCounter.Position?
        /// This process's latest commits, one after the other with no other commit between:
        /// where the WAL stood at the first one's `BEGIN`, and after the last one.
        var ownRun: OwnRun?
        /// Wake-ups passed over without a reading (``wokenBy()``), for tests.
        var passedOver = 0
        var wakeup: FileWakeup?
        /// The observer thread, while it runs.
        var thread: pthread_t?
    }

    /// Left when the observer thread ends (entered when it starts).
    private let running = DispatchGroup()

    /// Why changes of other processes are noticed by polling only (every
    /// ``Configuration/changePollInterval``) instead of inotify wake-ups, or nil.
    var pollingReason: String? { state.withLock { $0.wakeup?.unavailableReason } }

    /// Wake-ups passed over because only this process had committed since the last reading.
    var wakeUpsPassedOver: Int { state.withLock { $0.passedOver } }

    /// A subscriber: the change, and where it was noticed.
    typealias Handler = @Sendable (DatabaseChange, Origin) -> Void

    /// Where a change was noticed.
    enum Origin: Equatable, Sendable {
        /// This process committed it: told on its committing thread.
        case thisProcess
        /// Another process: read on the observer thread after a wake-up, which
        /// ``subscribeToWakeUps(_:)``'s subscribers were told of before the reading.
        case wakeUp
        /// Another process: read on the observer thread after the backstop poll or an inotify
        /// overflow, which no wake-up subscriber was told of.
        case poll
    }

    private let state = Mutex(State())
    private let path: String
    private let notifyPath: String
    private let busyTimeoutMilliseconds: Int32
    /// Seconds between polls when inotify is unavailable (`Configuration.changePollInterval`).
    private let pollInterval: Double

    init(path: String, notifyPath: String, busyTimeoutMilliseconds: Int32, pollInterval: Double) {
        self.path = path
        self.notifyPath = notifyPath
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.pollInterval = pollInterval
    }

    /// Adds a subscriber; starts the observer thread on first use.
    /// - Throws: when the observer connection or the inotify watch cannot be set up.
    func subscribe(_ handler: @escaping Handler) throws -> UInt64 {
        try startIfNeeded()
        return state.withLock { s in
            s.nextToken += 1
            s.subscribers[s.nextToken] = handler
            return s.nextToken
        }
    }

    func unsubscribe(_ token: UInt64) {
        state.withLock {
            _ = $0.subscribers.removeValue(forKey: token)
            _ = $0.wakeUpSubscribers.removeValue(forKey: token)
        }
    }

    /// Adds a subscriber told on the observer thread of every wake-up that another process's
    /// commit may have caused, before the reading that says what changed; starts the observer
    /// thread on first use. The token is given back to ``unsubscribe(_:)``.
    func subscribeToWakeUps(_ handler: @escaping @Sendable () -> Void) throws -> UInt64 {
        try startIfNeeded()
        return state.withLock { s in
            s.nextToken += 1
            s.wakeUpSubscribers[s.nextToken] = handler
            return s.nextToken
        }
    }

    /// A commit of this process that stamped `sequence`, told while the write lock is held
    /// (``OwnStamp``): before its COMMIT, so that the observer's next reading, whenever it comes,
    /// skips the stamps as this process's own, then whether that COMMIT succeeded (the commit
    /// counts in the ``OwnRun`` from then on) or failed (the sequence is another's to stamp).
    func ownCommit(sequence: Int64, _ stamp: OwnStamp) {
        state.withLock { s in
            guard s.started else { return }
            switch stamp {
            case .committing(let begin):
                s.ledger.recordOwn(sequence)
                s.ownRun = begin.flatMap { OwnRun.after(s.ownRun, committedAt: $0, sequence: sequence) }
            case .committed:
                s.ownRun?.confirm(sequence)
            case .failed:
                s.ledger.forgetOwn(sequence)
                s.ownRun = nil
            }
        }
    }

    /// Delivers a commit of this process to subscribers at once: the tables it changed (its
    /// sequence was told to ``ownCommit(sequence:failed:)`` before the commit) and the tag bound
    /// where it was made.
    func localCommit(tables: Set<String>, tag: CommitTag?) {
        let handlers = state.withLock { s -> [Handler] in
            guard s.started else { return [] }
            return Array(s.subscribers.values)
        }
        let change = tables.contains(InternalTables.anyTable) ? .unknown(tag: tag) : DatabaseChange(rawTables: tables, tag: tag)
        for handler in handlers { handler(change, .thisProcess) }
    }

    func stop() {
        let wake = state.withLock { s -> FileWakeup? in
            s.stopped = true
            return s.wakeup
        }
        wake?.interrupt()
    }

    /// Stops the observer thread and waits (at most `seconds`) until it has closed its
    /// connection; called on the observer thread itself (from a subscriber), only stops it.
    func stopAndWait(seconds: Double = 5) {
        stop()
        let onObserverThread = state.withLock { $0.thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        if !onObserverThread { _ = running.wait(timeout: .now() + seconds) }
    }

    private func startIfNeeded() throws {
        let needsStart = state.withLock { s -> Bool in
            if s.started { return false }
            s.started = true
            return true
        }
        guard needsStart else { return }
        do {
            let connection = try Connection(path: path, readOnly: true, busyTimeoutMilliseconds: busyTimeoutMilliseconds, rules: LayoutRules())
            let wakeup = try FileWakeup(path: notifyPath)
            let counter = WALCommitCounter(databasePath: path)
            state.withLock {
                $0.wakeup = wakeup; $0.commitCounter = counter
            }
            _ = try read(connection)  // establishes the baseline
            let handover = Handover(connection)
            running.enter()
            let thread = Thread { [self] in
                state.withLock { $0.thread = pthread_self() }
                run(connection: handover.value, wakeup: wakeup)
                handover.value.close()
                state.withLock { $0.thread = nil }
                running.leave()
            }
            thread.name = "tandem.changes"
            thread.stackSize = 1 << 20
            thread.start()
        } catch {
            state.withLock { $0.started = false }
            throw error
        }
    }

    private func run(connection: Connection, wakeup: FileWakeup) {
        let interval = pollInterval * 1000
        let timeout = interval.isFinite ? Int32(max(1, min(interval, 86_400_000))) : 86_400_000
        while true {
            let event = wakeup.wait(timeoutMilliseconds: timeout)
            if state.withLock({ $0.stopped }) { return }
            // Woken by this process's own commits alone: they were delivered in-process, and a
            // reading would find nothing (a backstop poll or an overflow reads all the same).
            var toldAt: WALCommitCounter.Position?
            if event == .changed {
                guard case .other(let now) = wokenBy() else { continue }
                toldAt = now
                tellWakeUpSubscribers()
            }
            let change: DatabaseChange?
            if event == .overflow {
                _ = try? read(connection)
                change = .unknown
            } else {
                do { change = try read(connection) } catch { change = .unknown }  // nil: nothing new
            }
            // A commit after the wake-up subscribers were told and before the reading took the
            // WAL's position is in the reading, and its own wake-up will find nothing new: they
            // are told again, as they would have been at that wake-up.
            if let toldAt, state.withLock({ $0.read }) != toldAt { tellWakeUpSubscribers() }
            guard let change else { continue }
            let handlers = state.withLock { Array($0.subscribers.values) }
            for handler in handlers { handler(change, event == .changed ? .wakeUp : .poll) }
        }
    }

    private func tellWakeUpSubscribers() {
        for handler in state.withLock({ Array($0.wakeUpSubscribers.values) }) { handler() }
    }

    /// What a wake-up found.
    private enum WokenBy {
        /// Nothing committed since the last reading, or only this process (``OwnRun``): the
        /// reading counts as taken at the WAL's position now.
        case nothingNew
        /// Another commit, maybe: the WAL's position now (nil: unreadable).
        case other(WALCommitCounter.Position?)
    }

    private func wokenBy() -> WokenBy {
        guard let counter = state.withLock({ $0.commitCounter }), let now = counter.position else { return .other(nil) }
        return state.withLock { s in
            guard let read = s.read else { return .other(now) }
            // Nothing committed since (a process that exits closes the notify file, a wake-up too).
            if now == read { return .nothingNew }
            guard s.ownRun?.covers(from: read, to: now) == true else { return .other(now) }
            s.read = now
            if let newest = s.ownRun?.newestSequence(through: now) { s.ledger.passOverOwnCommits(through: newest) }
            s.ownRun?.drop(through: now)
            s.passedOver += 1
            return .nothingNew
        }
    }

    /// Reads stamps newer than the last seen, in one read transaction with `data_version`.
    /// Returns nil when nothing new was committed by another process.
    private func read(_ connection: Connection) throws -> DatabaseChange? {
        // The commit counter before the snapshot: any commit it counts is in the snapshot, so a
        // counter past the recorded value means a commit after the last Tandem commit (a
        // counter read after the snapshot could count this process's next commit).
        let counter = state.withLock { $0.commitCounter }
        let commits = counter?.position
        try connection.control(.begin)
        defer { connection.rollbackIfNeeded() }
        let since = state.withLock { $0.ledger.lastSequence }
        var reading = ChangeLedger.Reading(
            stamps: try connection.stamps(after: since),
            dataVersion: try connection.scalar("PRAGMA data_version").int64Value ?? 0,
            recordedCommits: try connection.counter(.commits).map(WALCommitCounter.Position.init(recorded:)),
            commits: commits)
        // The snapshot is taken by the first read above: a commit before it and after the
        // position (the shell's, which stamps nothing) moved the WAL on.
        reading.settled = commits != nil && counter?.position == commits
        try connection.control(.commit)
        return state.withLock {
            $0.read = commits
            if let commits { $0.ownRun?.drop(through: commits) }
            return $0.ledger.update(with: reading)
        }
    }
}
