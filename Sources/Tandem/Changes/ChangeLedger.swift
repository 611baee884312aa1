/// What an observer has seen so far, and the decision what a new reading means: pure state,
/// no SQLite, no threads (``ChangeObserver`` feeds it readings).
struct ChangeLedger {
    /// One read of the database's change record, in one snapshot.
    struct Reading {
        /// Stamps newer than ``ChangeLedger/lastSequence``: (table, sequence number).
        var stamps: [(table: String, sequence: Int64)]
        /// `PRAGMA data_version` of the observer's connection.
        var dataVersion: Int64
        /// Where the last Tandem commit recorded the WAL stood (`commits`), if anywhere.
        var recordedCommits: WALCommitCounter.Position?
        /// Where the WAL stands, read before the snapshot, if readable.
        var commits: WALCommitCounter.Position?
        /// Whether the WAL stood at ``commits`` again once the snapshot was taken: no commit came
        /// between, so the counters describe the snapshot.
        var settled = true
    }

    private(set) var lastSequence: Int64 = 0
    /// Sequence numbers of this process's own commits, delivered in-process already.
    private(set) var ownSequences: Set<Int64> = []
    private(set) var lastDataVersion: Int64?
    /// The WAL position last reported as an unstamped (foreign) commit.
    private(set) var lastForeignCommits: WALCommitCounter.Position?
    /// Set when commits of this process alone were passed over without a reading
    /// (``passOverOwnCommits(through:)``): `data_version` has moved for them.
    private(set) var ownCommitsPassedOver = false

    /// This process is committing with `sequence` (told before its COMMIT, so that a reading in
    /// between cannot take the stamps for another process's); its stamps are skipped when read back.
    mutating func recordOwn(_ sequence: Int64) {
        ownSequences.insert(sequence)
    }

    /// The COMMIT of `sequence`, recorded by ``recordOwn(_:)``, failed: another process may stamp
    /// that number next.
    mutating func forgetOwn(_ sequence: Int64) {
        ownSequences.remove(sequence)
    }

    /// Every commit since the last reading was this process's own (``OwnRun``), the newest of
    /// them stamping `sequence`: their stamps count as read (a commit told since, maybe still
    /// under way, stamps a higher one and stays to be skipped), and `data_version`, which moved
    /// for them, tells nothing at the next reading where the WAL's commit counter can tell instead.
    mutating func passOverOwnCommits(through sequence: Int64) {
        lastSequence = max(lastSequence, sequence)
        ownSequences = ownSequences.filter { $0 > sequence }
        ownCommitsPassedOver = true
    }

    /// The change another process made since the last reading, or nil (nothing new, or the
    /// first reading, which only sets the baseline).
    ///
    /// - A commit counter ahead of the recorded one, or a WAL made anew since it was recorded: a
    ///   writer that stamps nothing committed after the last Tandem commit: unknown tables.
    /// - Stamps of other processes' commits: those tables (`*` among them: unknown).
    /// - No new stamp but `data_version` moved: a writer that stamps nothing: unknown.
    mutating func update(with reading: Reading) -> DatabaseChange? {
        var foreign = false
        if let recorded = reading.recordedCommits, let commits = reading.commits, commits != lastForeignCommits,
            Self.foreignCommits(at: commits, recorded: recorded)
        {
            lastForeignCommits = commits
            foreign = true
        }
        let first = lastDataVersion == nil
        // After own commits passed over, a moved `data_version` is theirs; a commit of another
        // writer since moved the commit counter, which the check above reads.
        let countersTell = reading.recordedCommits != nil && reading.commits != nil && reading.settled
        let versionChanged = lastDataVersion != reading.dataVersion && !(ownCommitsPassedOver && countersTell)
        ownCommitsPassedOver = false
        lastDataVersion = reading.dataVersion
        var tables: Set<String> = []
        for (table, sequence) in reading.stamps {
            lastSequence = max(lastSequence, sequence)
            if !ownSequences.contains(sequence) { tables.insert(table) }
        }
        ownSequences = ownSequences.filter { $0 > lastSequence }
        if first { return nil }
        if foreign || tables.contains(InternalTables.anyTable) { return .unknown }
        if !tables.isEmpty { return DatabaseChange(rawTables: tables) }
        if reading.stamps.isEmpty && versionChanged { return .unknown }
        return nil
    }

    /// True when the WAL standing at `current` means commits after the one that recorded
    /// `recorded`: the counter ahead in the same WAL (or the one restart made of it), or another
    /// WAL (made anew since). The position is read before the snapshot, so it may lag the record
    /// (a Tandem commit in between, maybe after a restart), never lead it falsely.
    static func foreignCommits(at current: WALCommitCounter.Position, recorded: WALCommitCounter.Position) -> Bool {
        if current.salt == recorded.salt &- 1 { return false }
        guard let ahead = current.commits(after: recorded) else {
            return !recorded.isNewWAL && current.salt != recorded.salt && current.salt != recorded.salt &+ 1
        }
        return ahead > 0
    }
}
