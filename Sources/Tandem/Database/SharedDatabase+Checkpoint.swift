import CSQLite
import Foundation

extension SharedDatabase {
    /// How a checkpoint treats readers and writers.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/wal_checkpoint_v2.html
    public enum CheckpointMode: String, Sendable {
        /// Copy what no reader needs; never wait.
        case passive = "PASSIVE"
        /// Copy everything, waiting (up to the wait) for readers, then truncate the WAL to 0 bytes.
        case truncate = "TRUNCATE"
    }

    /// The result of ``SharedDatabase/checkpoint(_:maximumWait:)``: frames in the WAL, and frames copied into the database.
    public struct CheckpointResult: Sendable, Equatable {
        /// True when a reader kept the checkpoint from completing within the wait.
        public let busy: Bool
        /// Frames in the WAL when the checkpoint ran.
        public let walFrames: Int
        /// Frames copied back into the database file.
        public let checkpointedFrames: Int
    }

    /// Checkpoints the WAL, holding the write lock meanwhile. Waits for readers at most
    /// `maximumWait` (whole milliseconds, a fraction rounded up), so a long reader delays
    /// writers only that long; a
    /// checkpoint this process's writer runs in the background (SQLite runs one checkpoint at a
    /// time) is waited for first, as long again.
    /// - Throws: ``TandemError/readOnly(path:)``; ``SQLiteError``.
    @discardableResult
    public func checkpoint(_ mode: CheckpointMode, maximumWait: Duration = .milliseconds(100)) throws -> CheckpointResult {
        let maximumWaitMilliseconds = maximumWait.clampedMilliseconds
        guard let writer else { throw TandemError.readOnly(path: path) }
        return try writer.withExclusiveAccess { connection in
            _ = writer.checkpointing.waitForPasses(milliseconds: maximumWaitMilliseconds)
            connection.setBusyTimeout(maximumWaitMilliseconds)
            defer { connection.setBusyTimeout(configuration.busyTimeoutMilliseconds) }
            let result = try connection.checkpoint(mode == .passive ? SQLITE_CHECKPOINT_PASSIVE : SQLITE_CHECKPOINT_TRUNCATE)
            return CheckpointResult(busy: result.busy, walFrames: Int(result.frames), checkpointedFrames: Int(result.copied))
        }
    }

    /// The size of `<db>-wal` in bytes (0 when it does not exist).
    public func walSize() -> Int64 {
        var stats = stat()
        return stat(path + "-wal", &stats) == 0 ? Int64(stats.st_size) : 0
    }
}
