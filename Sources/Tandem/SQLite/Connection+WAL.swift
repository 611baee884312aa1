import CSQLite

extension Connection {
    /// Takes SQLite's automatic checkpoint out of `COMMIT`: replaces it with a WAL hook that only
    /// records the WAL's size after each commit in ``walFrames``, for the caller to checkpoint
    /// when it chooses (see ``checkpoint()``).
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/wal_hook.html (a WAL hook
    /// replaces the automatic checkpoint of https://www.sqlite.org/c3ref/wal_autocheckpoint.html)
    func deferCheckpoints() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_wal_hook(
            handle,
            { context, _, _, frames in
                guard let context else { return SQLITE_OK }
                Unmanaged<Connection>.fromOpaque(context).takeUnretainedValue().walFrames = frames
                return SQLITE_OK
            }, context)
    }

    /// SQLite's data version of the main database as this connection sees it: it changes with
    /// every commit of this connection, and when a transaction of this connection begins after
    /// another connection (of any process) committed. Read without I/O.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/c_fcntl_begin_atomic_write.html#sqlitefcntldataversion
    var dataVersion: UInt32 {
        var version: UInt32 = 0
        _ = sqlite3_file_control(handle, "main", SQLITE_FCNTL_DATA_VERSION, &version)
        return version
    }

    /// What ``checkpoint(_:)`` returns: kept from completing, frames in the WAL, frames copied.
    typealias CheckpointResult = (busy: Bool, frames: Int32, copied: Int32)

    /// A checkpoint of the main database in `mode` (`SQLITE_CHECKPOINT_PASSIVE`: copy what no
    /// reader needs, never wait; `…_TRUNCATE`: wait for readers through the busy handler, then
    /// truncate the WAL). Returns whether it was kept from completing (`SQLITE_BUSY`: another
    /// checkpoint running, or readers), the frames in the WAL and the frames now copied (-1 each
    /// when it could not run).
    /// - Throws: ``SQLiteError`` for any other failure.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/wal_checkpoint_v2.html
    func checkpoint(_ mode: Int32 = SQLITE_CHECKPOINT_PASSIVE) throws -> CheckpointResult {
        var frames: Int32 = -1, copied: Int32 = -1
        let rc = sqlite3_wal_checkpoint_v2(handle, nil, mode, &frames, &copied)
        guard rc == SQLITE_OK || rc == SQLITE_BUSY else { throw error(rc, sql: nil) }
        return (rc == SQLITE_BUSY, frames, copied)
    }
}
