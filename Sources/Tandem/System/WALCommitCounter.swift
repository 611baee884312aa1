import Foundation
import Synchronization

/// Reads SQLite's count of committed write transactions from the WAL index (`<db>-shm`).
///
/// The WAL-index header's `iChange` field is "incremented with each transaction" by every
/// writer, Tandem or not, and checkpoints leave it alone. Tandem records in `ps_state` the value it
/// will have after each Tandem commit; a different value means another writer (the `sqlite3`
/// shell, say) committed since, so its changes are reported even when it stamps nothing.
///
/// Related SQLite documentation: https://www.sqlite.org/walformat.html#the_wal_index_file_format
final class WALCommitCounter: Sendable {
    private let path: String
    /// The `-shm` file, opened at first use (SQLite creates it with the first WAL transaction).
    private let fd = Mutex<Int32>(-1)

    init(databasePath: String) {
        path = databasePath + "-shm"
    }

    deinit { fd.withLock { if $0 >= 0 { close($0) } } }

    /// The WAL index's commit counter now, or nil when the header cannot be read.
    var value: Int64? {
        fd.withLock { fd -> Int64? in
            if fd < 0 { fd = Glibc.open(path, O_RDONLY | O_CLOEXEC) }
            guard fd >= 0 else { return nil }
            var header = [UInt8](repeating: 0, count: 12)
            guard pread(fd, &header, 12, 0) == 12 else { return nil }
            let version = header.withUnsafeBytes { $0.load(fromByteOffset: 0, as: UInt32.self) }
            guard version == 3_007_000 else { return nil }  // WALINDEX_MAX_VERSION: the format this reads
            return Int64(header.withUnsafeBytes { $0.load(fromByteOffset: 8, as: UInt32.self) })
        }
    }
}
