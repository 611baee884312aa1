/// Tandem's own tables, created in every database.
enum InternalTables {
    static let crud = "ps_crud"

    /// `ps_state` holds Tandem's counters in one small WITHOUT ROWID b-tree, so each commit's
    /// bookkeeping writes one page (and the update hook, which skips WITHOUT ROWID tables, never
    /// reports it as a change):
    /// - `next_tx`: the transaction id that view triggers give new CRUD entries;
    /// - `seq`: the last change sequence number;
    /// - `changed:<table>`: the sequence number of the last commit that changed `<table>`.
    static let state = "ps_state"
    static let changedPrefix = "changed:"
    /// The stamp for a commit whose changed tables are not known: every live query refreshes.
    static let anyTable = "*"

    static let ddl = """
        CREATE TABLE IF NOT EXISTS ps_kv(key TEXT PRIMARY KEY NOT NULL, value ANY) STRICT;
        CREATE TABLE IF NOT EXISTS ps_crud(id INTEGER PRIMARY KEY AUTOINCREMENT, tx_id INTEGER NOT NULL, data TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS ps_state(key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
        \(counters)
        CREATE TABLE IF NOT EXISTS ps_download(seq INTEGER PRIMARY KEY, op TEXT NOT NULL, type TEXT NOT NULL, id TEXT NOT NULL, data TEXT);
        CREATE TABLE IF NOT EXISTS ps_untyped(type TEXT NOT NULL, id TEXT NOT NULL, data TEXT, PRIMARY KEY(type, id));
        INSERT OR IGNORE INTO ps_kv(key, value) VALUES ('client_id', uuid());
        INSERT OR IGNORE INTO ps_kv(key, value) VALUES ('epoch', 0);
        """

    /// Inserts missing counters with safe values: `next_tx` past every queued transaction id,
    /// `seq` at the newest change stamp, so neither ever goes back.
    static let counters = """
        INSERT OR IGNORE INTO ps_state(key, value) VALUES
            ('next_tx', coalesce((SELECT max(tx_id) FROM ps_crud), 0) + 1),
            ('seq', max(0, coalesce((SELECT max(value) FROM ps_state WHERE key LIKE 'changed:%'), 0)));
        """

    /// The transaction id for new CRUD entries, as view triggers read it.
    static let nextTransactionID = "(SELECT value FROM ps_state WHERE key = 'next_tx')"

    /// A lowercase random UUID (version 4) from SQLite built-ins only, so that writes through
    /// the views from any SQLite client get ids without Tandem's `uuid()` function.
    static let uuidExpression = """
        (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || \
        substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))))
        """
}
