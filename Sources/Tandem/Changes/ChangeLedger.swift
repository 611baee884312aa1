/// What an observer has seen so far, and the decision what a new reading means: pure state,
/// no SQLite, no threads (``ChangeObserver`` feeds it readings).
struct ChangeLedger {
    /// One read of the database's change record, in one snapshot.
    struct Reading {
        /// Stamps newer than ``ChangeLedger/lastSequence``: (table, sequence number).
        var stamps: [(table: String, sequence: Int64)]
        /// `PRAGMA data_version` of the observer's connection.
        var dataVersion: Int64
        /// The commit counter value the last Tandem commit recorded (`commits`), if any.
        var recordedCommits: Int64?
        /// SQLite's commit counter, read before the snapshot, if readable.
        var commits: Int64?
    }

    private(set) var lastSequence: Int64 = 0
    /// Sequence numbers of this process's own commits, delivered in-process already.
    private(set) var ownSequences: Set<Int64> = []
    private(set) var lastDataVersion: Int64?
    /// The commit counter value last reported as an unstamped (foreign) commit.
    private(set) var lastForeignCommits: Int64?

    /// This process committed with `sequence`; its stamps are skipped when read back.
    mutating func recordOwn(_ sequence: Int64) {
        ownSequences.insert(sequence)
    }

    /// The change another process made since the last reading, or nil (nothing new, or the
    /// first reading, which only sets the baseline).
    ///
    /// - A commit counter ahead of the recorded one: a writer that stamps nothing committed
    ///   after the last Tandem commit: unknown tables.
    /// - Stamps of other processes' commits: those tables (`*` among them: unknown).
    /// - No new stamp but `data_version` moved: a writer that stamps nothing: unknown.
    mutating func update(with reading: Reading) -> DatabaseChange? {
        var foreign = false
        if let recorded = reading.recordedCommits, let commits = reading.commits, commits != lastForeignCommits,
           case let ahead = (commits - recorded) & 0xffff_ffff, ahead > 0, ahead < 0x8000_0000 {
            lastForeignCommits = commits
            foreign = true
        }
        let first = lastDataVersion == nil
        let versionChanged = lastDataVersion != reading.dataVersion
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
}
