import CSQLite
import Foundation
import Synchronization

/// Reads where SQLite's WAL stands from the WAL-index header (`<db>-shm`): its commit counter,
/// the WAL's first salt and its frame count.
///
/// The header's `iChange` is "incremented with each transaction" by every writer, Tandem or
/// not, and checkpoints leave it alone. Tandem records in `ps_state` the ``Position`` after each
/// Tandem commit; a position that does not follow it means another writer (the `sqlite3`
/// shell, say) committed since, so its changes are reported even when it stamps nothing.
///
/// The counter alone repeats: when every connection has closed, SQLite builds the WAL index
/// anew and counts from 0 again (from the WAL's frames when the WAL outlived the connections, as
/// it does when processes exit without closing, or with a new WAL after a clean close), so a
/// foreign commit after a reopen could bring the counter to the very value the last Tandem commit
/// recorded. So Tandem also records the WAL's salt-1, which a new WAL starts at random and a
/// restart after a checkpoint moves up by one (leaving the counter alone), and compares the
/// WAL's frames with those the last Tandem commit left, which the write lock's record keeps
/// (``follows(_:framesAfter:)``): within one WAL, frames only grow.
///
/// Related SQLite documentation: https://www.sqlite.org/walformat.html#the_wal_index_file_format
final class WALCommitCounter: Sendable {
    /// Where the WAL stands: its salt-1, the commit counter, and its frames.
    struct Position: Equatable {
        var salt: UInt32
        var commits: UInt32
        /// Frames in the WAL (`mxFrame`); not part of ``recorded``.
        var frames: UInt32 = 0

        /// As one integer for `ps_state`: the salt in the high 32 bits, the counter in the low.
        var recorded: Int64 { Int64(bitPattern: UInt64(salt) << 32 | UInt64(commits)) }

        init(salt: UInt32, commits: UInt32, frames: UInt32 = 0) {
            self.salt = salt
            self.commits = commits
            self.frames = frames
        }

        init(recorded: Int64) {
            let bits = UInt64(bitPattern: recorded)
            self.init(salt: UInt32(truncatingIfNeeded: bits >> 32), commits: UInt32(truncatingIfNeeded: bits))
        }

        /// The position after one more commit in this WAL.
        var next: Position { Position(salt: salt, commits: commits &+ 1) }

        /// True when no commit followed the Tandem commit that recorded `recorded` (its
        /// position at its `BEGIN`, with the counter one up) and left `framesAfter` frames in the
        /// WAL (what SQLite's WAL hook reported after it).
        ///
        /// In the same WAL, frames only grow: the same frame count means no commit since, whatever
        /// the counter (which WAL-index recovery restarts from 0 when the WAL outlived every
        /// connection). One restart later (that commit's own, or a checkpoint's since), the
        /// counter must not have moved and the frames must be that commit's, or none. Any other WAL
        /// (made anew, or restarted twice) counts as a commit since. A commit that made the WAL
        /// (``isNewWAL``) gave it salts it could not record: the counter and the frames must match.
        func follows(_ recorded: Position, framesAfter: UInt32) -> Bool {
            if recorded.isNewWAL { return commits == recorded.commits && frames == framesAfter }
            if salt == recorded.salt { return frames == framesAfter }
            if salt == recorded.salt &+ 1 { return commits == recorded.commits && (frames == framesAfter || frames == 0) }
            return false
        }

        /// True for a WAL index with no WAL yet (SQLite leaves the salts 0 until the first commit
        /// writes a WAL header, with salts of its own): a commit that began here made the WAL,
        /// so its salt could not be known in it.
        var isNewWAL: Bool { salt == 0 }

        /// How many commits the counter is past `recorded`, in the same or the next WAL (or the
        /// WAL a commit that began with none made); nil when this is another WAL (made anew
        /// since) or the counter is behind.
        func commits(after recorded: Position) -> UInt32? {
            guard recorded.isNewWAL || salt == recorded.salt || salt == recorded.salt &+ 1 else { return nil }
            let ahead = commits &- recorded.commits
            return ahead < 0x8000_0000 ? ahead : nil
        }
    }

    private let database: String
    private let path: String

    init(databasePath: String) {
        database = databasePath
        path = databasePath + "-shm"
    }

    /// Where the WAL stands now, or nil when the header cannot be read. The `-shm` is read
    /// through the process's descriptor of it (``LockSafeFiles``): one opened and closed here
    /// would cancel the locks SQLite holds on it for this process's connections.
    var position: Position? {
        guard let header = LockSafeFiles.read(path, of: database, count: 40), header.count == 40 else { return nil }
        return header.withUnsafeBytes(Self.position)
    }

    /// Where the WAL stands, read from the mapping of the WAL index that the connection `handle`
    /// (an `sqlite3*`) has (no system call), or from the file as ``position`` reads it when that
    /// mapping cannot be had. The connection must hold a write transaction: the index is mapped
    /// then, and stable.
    func position(inConnection handle: OpaquePointer) -> Position? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 40) { header in
            guard tandem_wal_index_header(handle, header.baseAddress, 40) == 1 else { return position }
            return Self.position(UnsafeRawBufferPointer(header))
        }
    }

    /// The position a WAL-index header's first 40 bytes give, or nil for an index of another version.
    private static func position(_ bytes: UnsafeRawBufferPointer) -> Position? {
        // The index's own fields are in the machine's order; the salts are copied from the
        // WAL header, in big-endian order.
        guard bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self) == 3_007_000 else { return nil }  // WALINDEX_MAX_VERSION
        return Position(
            salt: UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 32, as: UInt32.self)),
            commits: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self),
            frames: bytes.loadUnaligned(fromByteOffset: 16, as: UInt32.self))
    }
}
