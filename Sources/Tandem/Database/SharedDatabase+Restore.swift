import CSQLite
import Foundation

extension SharedDatabase {
    /// Replaces the database at `path` with a copy of `backup` (a file ``backup(to:progress:)``
    /// wrote, or any idle Tandem database), with SQLite's backup API.
    ///
    /// The copy is written beside `path` and then renamed over it, after which the old file's
    /// sidecar files are removed: its `-wal` and `-shm` (whose frames belong to the old file and
    /// would otherwise be read as part of the new one) and Tandem's lock and wake-up files. `path` need not exist. The restored
    /// file keeps the backup's upload queue, client id and download cursor: its queued writes are
    /// uploaded at the next sync, each exactly once, and the download resumes from the backup's
    /// cursor. Until the rename nothing at `path` changes; a failed restore removes its copy.
    ///
    /// ```swift
    /// try SharedDatabase.restore(from: "/backups/app-2024-05-01.db", to: "/var/lib/app/app.db")
    /// ```
    ///
    /// Related SQLite documentation: https://www.sqlite.org/backup.html
    /// - Throws: ``TandemError/inUse(path:users:)`` while this or another process has `path` (or
    ///   one of its sidecar files) open; ``TandemError/notInitialized(path:)`` when `backup` is not a
    ///   Tandem database; ``TandemError/cannotOpen(path:reason:)`` when it cannot be read;
    ///   ``SQLiteError`` or ``SystemError`` when the copy cannot be written.
    public static func restore(from backup: String, to path: String) throws {
        let target = try resolvedPath(path)
        let source = try resolvedPath(backup)
        guard FileManager.default.fileExists(atPath: source) else {
            throw TandemError.cannotOpen(path: source, reason: "the backup does not exist")
        }
        if let a = FileIdentity(path: source), a == FileIdentity(path: target) {
            throw TandemError.invalidArguments("the backup '\(source)' is the database '\(target)' itself")
        }
        try refuseUsers(of: target)
        var configuration = Configuration()
        configuration.readOnly = true
        let original = try SharedDatabase(path: source, configuration: configuration)  // a Tandem database, or refused
        defer { original.close() }
        var mode: mode_t = 0o600
        var info = stat()
        if stat(target, &info) == 0 { mode = info.st_mode & 0o7777 }
        let directory = URL(fileURLWithPath: target).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw TandemError.cannotOpen(path: target, reason: "the directory '\(directory)' does not exist")
        }
        let copy = directory + "/." + URL(fileURLWithPath: target).lastPathComponent + ".restoring-\(getpid())"
        let fd = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemError(call: "open(2)", path: copy, errno: errno) }
        Glibc.close(fd)
        do {
            try original.readers.read { try copyPages(from: $0, to: copy) }
            try syscall("chmod(2)", path: copy) { chmod(copy, mode) }
            try refuseUsers(of: target)  // again: one may have opened it meanwhile
            try syscall("rename(2)", path: target) { rename(copy, target) }
        } catch {
            for file in [copy, copy + "-wal", copy + "-shm", copy + "-journal"] { _ = unlink(file) }
            throw error
        }
        // The old file's WAL and WAL index, the lock files whose shared record described them and
        // the wake-up file: every sidecar, made anew for the restored file by its first user.
        for sidecar in DatabaseFiles(database: target).sidecars { _ = unlink(sidecar) }
        let dirFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 {
            _ = fsync(dirFD)
            Glibc.close(dirFD)
        }
    }

    /// Refuses while another process has `path` or one of its sidecar files open.
    private static func refuseUsers(of path: String) throws {
        if isOpenInThisProcess(path) { throw TandemError.inUse(path: path, users: ["this process"]) }
        let users = FileUsers.processes(using: [path] + DatabaseFiles(database: path).sidecars)
        if !users.isEmpty { throw TandemError.inUse(path: path, users: users.map(\.description)) }
    }

    /// Copies every page of `connection`'s database into the file `copy` (SQLite's backup API,
    /// one read transaction), then makes the copy a WAL database and closes it, leaving it idle.
    private static func copyPages(from connection: Connection, to copy: String) throws {
        let destination = try Connection(path: copy, readOnly: false, busyTimeoutMilliseconds: 5000, rules: nil)
        defer { destination.close() }
        guard let backup = sqlite3_backup_init(destination.handle, "main", connection.handle, "main") else {
            throw destination.error(sqlite3_errcode(destination.handle), sql: nil)
        }
        var rc: Int32 = SQLITE_OK
        var tries = 0
        repeat {
            rc = sqlite3_backup_step(backup, -1)
            tries += 1
            if rc == SQLITE_BUSY || rc == SQLITE_LOCKED { usleep(10_000) }
        } while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && tries < 500
        sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE else { throw destination.error(rc, sql: nil) }
        let mode = try destination.scalar("PRAGMA journal_mode=WAL").stringValue?.lowercased()
        guard mode == "wal" else { throw TandemError.cannotOpen(path: copy, reason: "could not switch the copy to WAL") }
    }
}
