/// A run of this process's commits with no other commit between them, in WAL positions
/// (``WALCommitCounter/Position``): where the WAL stood at the first one's `BEGIN`, and where
/// each one leaves it with the sequence number it stamped. Its observer, woken when the WAL
/// stands anywhere in the run at or after where its last reading saw it, has nothing to read:
/// every commit between is this process's, delivered in-process already. A commit told before
/// its `COMMIT` (the run's last, maybe still under way) counts only once the WAL has reached it.
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

    /// Whether every commit from `read` (where a reading saw the WAL) to `now` is one of the run's.
    func covers(from read: WALCommitCounter.Position, to now: WALCommitCounter.Position) -> Bool {
        guard !start.isNewWAL, read.salt == start.salt, now.salt == start.salt else { return false }
        // Offsets in the run (the 32-bit counter may wrap): start ≤ read ≤ now ≤ end.
        let (readAt, nowAt, endAt) = (read.commits &- start.commits, now.commits &- start.commits, end.commits &- start.commits)
        return readAt <= nowAt && nowAt <= endAt
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
