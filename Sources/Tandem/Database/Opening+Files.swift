import Foundation

/// The files of one database: the file itself and the sidecar files beside it.
extension Opening {
    /// The file's size in bytes; 0 when it does not exist.
    static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }

    /// Removes a database file that this process created and could not set up, with the
    /// sidecar files that did not exist before (`keeping` lists those that did).
    static func removeCreatedFiles(path: String, keeping existing: [String]) {
        for file in [path] + DatabaseFiles(database: path).sidecars where !existing.contains(file) {
            _ = unlink(file)
        }
    }

    /// True for a failure caused by another connection's lock (busy past the timeouts).
    static func isContention(_ error: Error) -> Bool {
        if let error = error as? SQLiteError { return error.isLockContention }
        if case TandemError.cannotOpen(_, let reason)? = error as? TandemError { return reason.hasPrefix(lockedPrefix) }
        return false
    }

    /// "the file system holding '<dir>' is full (N bytes free)" when less than 1 MiB is free
    /// there for this user, else nil.
    static func fullFileSystem(_ path: String) -> String? {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else { return nil }
        let free = UInt64(info.f_bavail) * UInt64(info.f_frsize)
        return free < 1 << 20 ? "the file system holding '\(directory)' is full (\(free) bytes free)" : nil
    }
}
