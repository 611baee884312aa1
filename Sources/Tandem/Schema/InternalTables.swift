/// Tandem's own tables, created in every database.
enum InternalTables {
    static let crud = "ps_crud"
    /// Tables whose changes are Tandem's own bookkeeping of a commit, never reported as changes.
    static let bookkeeping: Set<String> = ["ps_changes", "ps_tx"]

    static let ddl = """
        CREATE TABLE IF NOT EXISTS ps_kv(key TEXT PRIMARY KEY NOT NULL, value ANY) STRICT;
        CREATE TABLE IF NOT EXISTS ps_crud(id INTEGER PRIMARY KEY AUTOINCREMENT, tx_id INTEGER NOT NULL, data TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS ps_crud_by_tx ON ps_crud(tx_id);
        CREATE TABLE IF NOT EXISTS ps_tx(id INTEGER PRIMARY KEY NOT NULL, next_tx INTEGER NOT NULL, seq INTEGER NOT NULL DEFAULT 0);
        INSERT OR IGNORE INTO ps_tx(id, next_tx, seq) VALUES (1, 1, 0);
        CREATE TABLE IF NOT EXISTS ps_changes(tbl TEXT PRIMARY KEY NOT NULL, seq INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS ps_untyped(type TEXT NOT NULL, id TEXT NOT NULL, data TEXT, PRIMARY KEY(type, id));
        INSERT OR IGNORE INTO ps_kv(key, value) VALUES ('client_id', uuid());
        INSERT OR IGNORE INTO ps_kv(key, value) VALUES ('epoch', 0);
        """

    /// A lowercase random UUID (version 4) from SQLite built-ins only, so that writes through
    /// the views from any SQLite client get ids without Tandem's `uuid()` function.
    static let uuidExpression = """
        (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || \
        substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))))
        """
}
