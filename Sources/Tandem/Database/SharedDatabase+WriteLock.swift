import Foundation

extension SharedDatabase {
    /// Runs `body` holding Tandem's cross-process write lock, outside any transaction, so that a
    /// program that does not use Tandem (the `sqlite3` shell, a migration script) writes while
    /// Tandem writers of every process wait their turn instead of racing it into "database is
    /// locked". Afterwards, when anything was committed meanwhile (SQLite's `data_version`
    /// moved), every live query of every process refreshes: Tandem cannot know what such a
    /// program changed (a `changed:*` stamp, see ``notifyChanged(tables:)``). When nothing was
    /// committed (the program could not start, or only read), the file is left as it was.
    ///
    /// Waiting for the lock honours the busy timeout (``Configuration/busyTimeout``).
    /// - Throws: ``TandemError/readOnly(path:)``; ``SQLiteError`` (`SQLITE_BUSY`) when the lock
    ///   stays held past the busy timeout; what `body` throws (after the refresh, if anything
    ///   was committed).
    ///
    /// Related SQLite documentation: https://www.sqlite.org/pragma.html#pragma_data_version
    public func withWriteLock<T>(_ body: () throws -> T) throws -> T {
        try withInheritableWriteLock { _ in try body() }
    }

    /// ``withWriteLock(_:)``, giving `body` a descriptor of the lock (open without `FD_CLOEXEC`
    /// until `body` returns) that a child process it starts inherits: the child then holds the
    /// lock as long as it keeps the descriptor open, so a writer this process starts keeps the
    /// lock even when this process dies first (`kill -9` of `tandem run`). The kernel releases a
    /// `flock` when the last descriptor of its open file description closes. Every process this
    /// process starts meanwhile inherits it.
    /// - Throws: as ``withWriteLock(_:)``; ``SystemError`` when the descriptor cannot be made.
    ///
    /// Related documentation: https://man7.org/linux/man-pages/man2/flock.2.html
    public func withInheritableWriteLock<T>(_ body: (_ descriptor: Int32) throws -> T) throws -> T {
        guard let writer else { throw TandemError.readOnly(path: path) }
        var committed = true
        defer { if committed { try? notifyChanged(tables: []) } }
        return try writer.withExclusiveAccess { connection in
            let before = try connection.scalar("PRAGMA data_version")
            defer { committed = (try? connection.scalar("PRAGMA data_version")) != before }
            let descriptor = try writer.inheritableLockDescriptor()
            defer { Glibc.close(descriptor) }
            return try body(descriptor)
        }
    }
}
