/// A run of this process's commits with no other commit between them, in WAL positions
/// (``WALCommitCounter/Position``): where the WAL stood at the first one's `BEGIN`, and where
/// each one leaves it with the sequence number it stamped. Its observer, woken when the WAL
/// stands anywhere in the run at or after where its last reading saw it, has nothing to read:
/// every commit between is this process's, delivered in-process already. A commit told before
/// its `COMMIT` counts only once its writer has said the `COMMIT` succeeded: until then the WAL
/// at its predicted position may hold another writer's commit made after it failed.
///
/// Positions are compared by the WAL's salt-1 and SQLite's commit counter, which each commit
/// moves on by one. A commit that restarts the WAL (a new salt) or makes it anew ends the run at
/// a position it does not predict, as does any commit of another process or connection, or a
/// Tandem commit that stamps nothing: the observer reads then, as it always did.
struct OwnRun: Equatable, Sendable {
    /// One commit of the run: the WAL's commit counter after it, and the sequence it stamped.
    struct Commit: Equatable, Sendable {
        var commits: UInt32
        var sequence: Int64
        /// Its `COMMIT` succeeded (``OwnStamp/committed``).
        var confirmed = false
    }

    var start: WALCommitCounter.Position
    /// Where the WAL stands after the run's last commit.
    private(set) var end: WALCommitCounter.Position
    /// The run's commits not yet passed over or read, oldest first.
    private(set) var commits: [Commit] = []
    /// Commits kept at most: a run longer than that, unread, is dropped (the observer reads).
    static let longest = 4096

    init(start: WALCommitCounter.Position) {
        self.start = start
        self.end = start
    }

    /// The run after a commit stamping `sequence` that began with the WAL at `begin` (read under
    /// SQLite's write lock): `previous` goes on when it ended there, else a new run starts. Nil
    /// when the run would grow past ``longest``.
    static func after(_ previous: OwnRun?, committedAt begin: WALCommitCounter.Position, sequence: Int64) -> OwnRun? {
        var run = previous.flatMap { same($0.end, begin) ? $0 : nil } ?? OwnRun(start: begin)
        guard run.commits.count < longest else { return nil }
        run.commits.append(Commit(commits: begin.commits &+ 1, sequence: sequence))
        run.end = WALCommitCounter.Position(salt: begin.salt, commits: begin.commits &+ 1)
        return run
    }

    /// The commit stamping `sequence` succeeded.
    mutating func confirm(_ sequence: Int64) {
        if let index = commits.lastIndex(where: { $0.sequence == sequence }) { commits[index].confirmed = true }
    }

    /// Whether every commit from `read` (where a reading saw the WAL) to `now` is one of the
    /// run's, each confirmed.
    func covers(from read: WALCommitCounter.Position, to now: WALCommitCounter.Position) -> Bool {
        guard !start.isNewWAL, read.salt == start.salt, now.salt == start.salt else { return false }
        // Offsets in the run (the 32-bit counter may wrap): start ≤ read ≤ now ≤ end.
        let (readAt, nowAt, endAt) = (read.commits &- start.commits, now.commits &- start.commits, end.commits &- start.commits)
        guard readAt <= nowAt, nowAt <= endAt else { return false }
        return commits.allSatisfy { $0.confirmed || $0.commits &- start.commits > nowAt }
    }

    /// The newest sequence stamped by the run's commits the WAL at `now` includes, if any.
    func newestSequence(through now: WALCommitCounter.Position) -> Int64? {
        guard now.salt == start.salt else { return nil }
        let nowAt = now.commits &- start.commits
        return commits.last { $0.commits &- start.commits <= nowAt }?.sequence
    }

    /// Forgets the commits up to `position` (read or passed over); they are done with.
    mutating func drop(through position: WALCommitCounter.Position) {
        guard position.salt == start.salt else { return }
        let through = position.commits &- start.commits
        commits.removeAll { $0.commits &- start.commits <= through }
    }

    private static func same(_ a: WALCommitCounter.Position, _ b: WALCommitCounter.Position) -> Bool {
        a.salt == b.salt && a.commits == b.commits
    }
}

/// What a writer tells its observer of a commit that stamped tables (``ChangeObserver/ownCommit(sequence:_:)``),
/// all while it holds the write lock.
enum OwnStamp: Equatable, Sendable {
    /// About to `COMMIT`, begun with the WAL at this position (nil: unreadable).
    case committing(begin: WALCommitCounter.Position?)
    /// The `COMMIT` succeeded.
    case committed
    /// The `COMMIT` failed: nothing of it stands.
    case failed
}
