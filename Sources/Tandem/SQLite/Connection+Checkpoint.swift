import CSQLite

extension Connection {
    /// SQLite's default automatic checkpoint threshold, in WAL frames (pages).
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/wal_autocheckpoint.html
    static let automaticCheckpointFrames: Int32 = 1000

    /// Replaces SQLite's automatic checkpoint with a WAL hook that only records the WAL's size.
    ///
    /// SQLite runs its automatic checkpoint inside the `COMMIT` step, after the WAL write lock is
    /// released but while Tandem's cross-process write lock is still held, so every other writer
    /// would wait for the checkpoint's I/O. The writer calls ``checkpointIfDue()`` after releasing
    /// its lock instead, which is where plain SQLite writers checkpoint too: beside other writers.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/wal_hook.html
    func deferAutomaticCheckpoints() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_wal_hook(handle, { context, _, _, frames in
            guard let context else { return SQLITE_OK }
            Unmanaged<Connection>.fromOpaque(context).takeUnretainedValue().walFramesAfterCommit = frames
            return SQLITE_OK
        }, context)
    }

    /// Runs a `PASSIVE` checkpoint when the last commit left at least
    /// ``automaticCheckpointFrames`` frames in the WAL, as SQLite's automatic checkpoint would.
    /// A passive checkpoint never waits: it copies what no reader still needs, beside writers.
    /// Its errors are ignored, as the automatic checkpoint's are (the next commit tries again).
    func checkpointIfDue() {
        guard walFramesAfterCommit >= Self.automaticCheckpointFrames, isAutocommit else { return }
        walFramesAfterCommit = 0
        _ = sqlite3_wal_checkpoint_v2(handle, "main", SQLITE_CHECKPOINT_PASSIVE, nil, nil)
    }
}
