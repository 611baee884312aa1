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
        sqlite3_wal_hook(handle, { context, _, _, frames in
            guard let context else { return SQLITE_OK }
            Unmanaged<Connection>.fromOpaque(context).takeUnretainedValue().walFrames = frames
            return SQLITE_OK
        }, context)
    }

    /// A `PASSIVE` checkpoint of the main database: copies what it can without waiting for
    /// readers or writers. Returns the frames in the WAL and the frames now copied, or nil when
    /// another connection was checkpointing (`SQLITE_BUSY`) or the checkpoint failed.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/wal_checkpoint_v2.html
    func checkpoint() -> (frames: Int32, copied: Int32)? {
        var frames: Int32 = 0, copied: Int32 = 0
        guard sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &frames, &copied) == SQLITE_OK else { return nil }
        return (frames, copied)
    }
}
