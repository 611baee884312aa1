import Foundation

/// The keys of `ps_kv`, Tandem's stored state, with typed access inside a transaction.
enum StoredKey: String, CaseIterable {
    /// This database's client id (a UUID made when the file was created), sent with uploads.
    case clientID = "client_id"
    /// The current owner epoch (fencing token).
    case epoch
    /// The pid of the process that owns sync, while one does.
    case ownerPID = "owner_pid"
    /// The download cursor, in the backend's own format.
    case cursor
    /// Present (1) while a download backlog is being fetched.
    case downloading
    /// The ``SyncStatus`` the owner last wrote, as JSON.
    case syncStatus = "sync_status"
    /// The declared schema, as JSON.
    case schema
    /// The version of the generated views and triggers (``SchemaInstaller/layoutVersion``).
    case layout
    /// The identifier of the backend this database syncs with, and the name it was given.
    case backendID = "backend_id"
    case backendName = "backend_name"
    /// The column renames migrations made, as JSON (``RenamedColumns``).
    case renamedColumns = "renamed_columns"
    /// The table renames migrations made, as JSON (``RenamedTables``).
    case renamedTables = "renamed_tables"
    /// The columns and tables migrations dropped, as JSON (``MigrationDrops``).
    case migrationDrops = "migration_drops"
    /// The last verification's result, as JSON (``LastVerification``).
    case lastVerification = "last_verification"
}

extension Transaction {
    /// The stored value of `key`, or `.null`.
    func stored(_ key: StoredKey) throws -> DatabaseValue {
        try scalar("SELECT value FROM ps_kv WHERE key = ?", [key.rawValue])
    }

    /// Stores `value` under `key`.
    func store(_ key: StoredKey, _ value: any DatabaseValueConvertible) throws {
        try executeOwn("INSERT OR REPLACE INTO ps_kv(key, value) VALUES (?, ?)", [key.rawValue, value])
    }

    /// The JSON text stored under `key` read as `T`; nil when there is none (or no `ps_kv`
    /// table), or when the text is damaged.
    func storedJSON<T: Decodable>(_ key: StoredKey, as type: T.Type) throws -> T? {
        guard let text = try connection.storedIfPresent(key).stringValue else { return nil }
        return try? JSONDecoder().decode(T.self, from: Data(text.utf8))
    }

    /// Stores `value` under `key` as JSON text, its keys sorted.
    func storeJSON(_ key: StoredKey, _ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try store(key, String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// Removes `key` (only when its value is `value`, if given).
    func removeStored(_ key: StoredKey, ifValue value: (any DatabaseValueConvertible)? = nil) throws {
        if let value {
            try executeOwn("DELETE FROM ps_kv WHERE key = ? AND value = ?", [key.rawValue, value])
        } else {
            try executeOwn("DELETE FROM ps_kv WHERE key = ?", [key.rawValue])
        }
    }
}

extension Connection {
    /// The stored value of `key`, or `.null` when the file has no `ps_kv` table (not a Tandem file).
    func storedIfPresent(_ key: StoredKey) throws -> DatabaseValue {
        let hasKV = try scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(InternalTables.keyValue)]).int64Value ?? 0
        guard hasKV > 0 else { return .null }
        return try scalar("SELECT value FROM ps_kv WHERE key = ?", [.text(key.rawValue)])
    }
}
