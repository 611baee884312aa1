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
    /// Waiting for the lock honours the busy timeout (``Configuration/busyTimeoutMilliseconds``).
    /// - Throws: ``TandemError/readOnly(path:)``; ``SQLiteError`` (`SQLITE_BUSY`) when the lock
    ///   stays held past the busy timeout; what `body` throws (after the refresh, if anything
    ///   was committed).
    ///
    /// Related SQLite documentation: https://www.sqlite.org/pragma.html#pragma_data_version
    public func withWriteLock<T>(_ body: () throws -> T) throws -> T {
        guard let writer else { throw TandemError.readOnly(path: path) }
        var committed = true
        defer { if committed { try? notifyChanged(tables: []) } }
        return try writer.withExclusiveAccess { connection in
            let before = try connection.scalar("PRAGMA data_version")
            defer { committed = (try? connection.scalar("PRAGMA data_version")) != before }
            return try body()
        }
    }
}
