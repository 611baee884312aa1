import CSQLite

/// The keys of `ps_state`, Tandem's counters, with typed access on a connection.
///
/// - `next_tx`: the transaction id that view triggers give new CRUD entries;
/// - `seq`: the last change sequence number;
/// - `commits`: where the WAL stood after the last Tandem commit (the WAL's salt-1 and SQLite's
///   commit counter, ``WALCommitCounter/Position``);
/// - `crud_last`: the id of the newest CRUD entry ever queued, so that ids never go back when
///   the queue empties (``InternalTables/nextCrudID``);
/// - `uploaded`, `synced`: how far uploads and the downloads after them got (``Counter/synced``);
/// - `changed:<table>`: the sequence number of the last commit that changed `<table>`.
enum Counter: String {
    case nextTransaction = "next_tx"
    case sequence = "seq"
    case commits
    case crudLast = "crud_last"
    /// The newest CRUD entry id the backend applied (set when the owner completes an upload).
    case uploaded
    /// The newest CRUD entry id known to be in this file's downloaded state: the owner sets it
    /// to ``uploaded`` as it stood when a download began, once that download is applied (a
    /// write checkpoint: the server's state it applied includes those uploads).
    case synced

    static let changedPrefix = "changed:"

    /// The stamp key of a changed table.
    static func changed(_ table: String) -> String { changedPrefix + table }

    /// See ``Connection/advanceCounters(commits:transactions:sequence:)``.
    fileprivate static let advanceSQL = """
        UPDATE ps_state SET value = CASE key WHEN '\(commits.rawValue)' THEN ?1 WHEN '\(nextTransaction.rawValue)' THEN value + ?2
            WHEN '\(sequence.rawValue)' THEN ?3 ELSE value END
        WHERE key >= '\(commits.rawValue)' AND key <= '\(sequence.rawValue)'
        """
}

extension Connection {
    /// The counter's value, or nil when it is missing.
    func counter(_ counter: Counter) throws -> Int64? {
        try scalar("SELECT value FROM ps_state WHERE key = ?", [.text(counter.rawValue)]).int64Value
    }

    func setCounter(_ counter: Counter, _ value: Int64?) throws {
        if let value {
            try execute("INSERT OR REPLACE INTO ps_state(key, value) VALUES (?, ?)", [.text(counter.rawValue), .integer(value)])
        } else {
            try execute("DELETE FROM ps_state WHERE key = ?", [.text(counter.rawValue)])
        }
    }

    /// Adds one (nothing when the counter is missing).
    ///
    /// Not `UPDATE … RETURNING`: SQLite collects RETURNING rows in an ephemeral table, created
    /// and freed on every run, which made that the dearest statement of a commit; a caller that
    /// needs the new value reads it with ``counter(_:)``.
    func incrementCounter(_ counter: Counter) throws {
        try execute("UPDATE ps_state SET value = value + 1 WHERE key = ?", [.text(counter.rawValue)])
    }

    /// Sets `commits` and `seq` and adds `transactions` to `next_tx`, in one statement instead of
    /// three: the keys from `commits` to `seq` are those three and `crud_last` (kept as it is),
    /// and every stamp key sorts before them. For a commit that knows the counters' values.
    func advanceCounters(commits: Int64, transactions: Int64, sequence: Int64) throws {
        try execute(Counter.advanceSQL, [.integer(commits), .integer(transactions), .integer(sequence)])
    }

    /// Stamps `table` as changed by the commit with sequence number `sequence`.
    func stampChanged(_ table: String, sequence: Int64) throws {
        try execute(
            "INSERT INTO ps_state(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [.text(Counter.changed(table)), .integer(sequence)])
    }

    /// Stamps newer than `sequence`, as (table, sequence).
    func stamps(after sequence: Int64) throws -> [(table: String, sequence: Int64)] {
        try fetchAll(
            "SELECT substr(key, ?), value FROM ps_state WHERE key > ? AND key < ? AND value > ?",
            [
                .integer(Int64(Counter.changedPrefix.count + 1)), .text(Counter.changedPrefix),
                .text(String(Counter.changedPrefix.dropLast()) + ";"), .integer(sequence),
            ]
        )
        .compactMap { row in row[0].stringValue.flatMap { t in row[1].int64Value.map { (t, $0) } } }
    }
}

extension Connection {
    /// Raises `counter` to `value` (never lowers it; creates it when missing).
    func raiseCounter(_ counter: Counter, to value: Int64) throws {
        try execute(
            "INSERT INTO ps_state(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value WHERE excluded.value > ps_state.value",
            [.text(counter.rawValue), .integer(value)])
    }
}
