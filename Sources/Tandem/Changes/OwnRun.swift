/// A run of this process's commits with no other commit between them, in WAL positions
/// (``WALCommitCounter/Position``): where the WAL stood at the first one's `BEGIN` and after the
/// last one. Its observer, woken when the WAL stands at ``end`` and its last reading saw the WAL
/// anywhere from ``start`` to there, has nothing to read: every commit since is this
/// process's, delivered in-process already.
///
/// Positions are compared by the WAL's salt-1 and SQLite's commit counter, which each commit
/// moves on by one. A commit that restarts the WAL (a new salt) or makes it anew ends the run at
/// a position it does not predict, as does any commit of another process or connection, or a
/// Tandem commit that stamps nothing: the observer reads then, as it always did.
struct OwnRun: Equatable, Sendable {
    var start: WALCommitCounter.Position
    var end: WALCommitCounter.Position

    /// The run after a commit that began with the WAL at `begin` (read under SQLite's write
    /// lock): `previous` goes on when it ended there, else a new run starts.
    static func after(_ previous: OwnRun?, committedAt begin: WALCommitCounter.Position) -> OwnRun {
        let end = WALCommitCounter.Position(salt: begin.salt, commits: begin.commits &+ 1)
        if let previous, Self.same(previous.end, begin) { return OwnRun(start: previous.start, end: end) }
        return OwnRun(start: begin, end: end)
    }

    /// Whether every commit between `read` (where a reading saw the WAL) and `now` is in the run.
    func covers(from read: WALCommitCounter.Position, to now: WALCommitCounter.Position) -> Bool {
        guard !start.isNewWAL, read.salt == start.salt, Self.same(end, now) else { return false }
        // In one WAL, within the run (the 32-bit counter may wrap).
        return read.commits &- start.commits <= end.commits &- start.commits
    }

    private static func same(_ a: WALCommitCounter.Position, _ b: WALCommitCounter.Position) -> Bool {
        a.salt == b.salt && a.commits == b.commits
    }
}
