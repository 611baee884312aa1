import CSQLite
import Foundation

extension SharedDatabase {
    /// Writes a consistent copy of the database to `destination` while writers keep going
    /// (SQLite's `VACUUM INTO` on a read snapshot). The copy holds the upload queue and the
    /// client id as they were: restoring it later (the copy replaces a lost file) keeps every
    /// queued write exactly once, as restored clients do (see DESIGN.md, "Backends").
    ///
    /// The copy gets the database file's permission bits (a 0600 database gives a 0600 copy,
    /// whatever the umask); while it is written, only its owner can read it.
    ///
    /// `progress` hears, about ten times a second from the copying thread, the bytes written so
    /// far and the size the copy will have (the database's pages in use).
    ///
    /// Related SQLite documentation: https://www.sqlite.org/lang_vacuum.html#vacuuminto
    /// - Throws: ``TandemError/cannotOpen(path:reason:)`` when `destination` exists or its
    ///   directory does not; ``SystemError`` when it cannot be created; ``SQLiteError`` on a
    ///   write failure, naming `destination` as its path (a partial copy is removed).
    public func backup(to destination: String, progress: ((BackupProgress) -> Void)? = nil) throws {
        let target = URL(fileURLWithPath: destination).standardizedFileURL.path
        let directory = URL(fileURLWithPath: target).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw TandemError.cannotOpen(path: target, reason: "the directory '\(directory)' does not exist")
        }
        var source = stat()
        try syscall("stat(2)", path: path) { stat(path, &source) }
        // Made here, empty and owner-only, so that SQLite (which creates files 0644 less the
        // umask) writes into it; VACUUM INTO takes an empty file.
        let fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 {
            let code = errno
            if code == EEXIST { throw TandemError.cannotOpen(path: target, reason: "it exists already; a backup never overwrites a file") }
            throw SystemError(call: "open(2)", path: target, errno: code)
        }
        do {
            defer { Glibc.close(fd) }
            try readers.read { connection in
                if let progress {
                    let pages = try connection.scalar("SELECT (SELECT page_count FROM pragma_page_count) - (SELECT freelist_count FROM pragma_freelist_count)")
                    let pageSize = try connection.scalar("PRAGMA page_size")
                    let total = (pages.int64Value ?? 0) * (pageSize.int64Value ?? 4096)
                    try connection.reportingProgress({
                        var written = stat()
                        if fstat(fd, &written) == 0 { progress(BackupProgress(bytesWritten: Int64(written.st_size), totalBytes: total)) }
                    }) {
                        try connection.execute("VACUUM INTO ?", [.text(target)])
                    }
                } else {
                    try connection.execute("VACUUM INTO ?", [.text(target)])
                }
            }
            try syscall("fchmod(2)", path: target) { fchmod(fd, source.st_mode & 0o7777) }
        } catch let error as SQLiteError where Self.isWriteFailure(error) {
            // VACUUM INTO only reads the database: a full disk or a failed write is the copy's.
            try? FileManager.default.removeItem(atPath: target)
            let reason = error.code == .full ? "the file system it is on is full" : "writing it failed (\(error.message))"
            throw SQLiteError(extendedCode: error.extendedCode, message: "cannot write the backup '\(target)': \(reason); nothing was copied", path: target)
        } catch {
            try? FileManager.default.removeItem(atPath: target)
            throw error
        }
    }
}

extension SharedDatabase {
    /// A failure to write the file SQLite writes to: a full file system, or a write, sync or
    /// truncation that failed.
    static func isWriteFailure(_ error: SQLiteError) -> Bool {
        // SQLITE_IOERR_WRITE, _FSYNC and _TRUNCATE (SQLite's C macros Swift does not import).
        error.code == .full || [3, 4, 6].map { SQLITE_IOERR | ($0 << 8) }.contains(error.extendedCode)
    }
}

/// How far ``SharedDatabase/backup(to:progress:)`` has got.
public struct BackupProgress: Sendable, Equatable {
    /// Bytes of the copy written so far.
    public var bytesWritten: Int64
    /// About the size the copy will have: the database's pages in use.
    public var totalBytes: Int64

    public init(bytesWritten: Int64, totalBytes: Int64) {
        self.bytesWritten = bytesWritten
        self.totalBytes = totalBytes
    }
}
