import Foundation

extension SharedDatabase {
    /// Runs `body` holding Tandem's cross-process write lock, outside any transaction, so that a
    /// program that does not use Tandem (the `sqlite3` shell, a migration script) writes while
    /// Tandem writers of every process wait their turn instead of racing it into "database is
    /// locked". Afterwards every live query of every process refreshes: Tandem cannot know what
    /// such a program changed (a `changed:*` stamp, see ``notifyChanged(tables:)``).
    ///
    /// Waiting for the lock honours the busy timeout (``Configuration/busyTimeoutMilliseconds``).
    /// - Throws: ``TandemError/readOnly(path:)``; ``SQLiteError`` (`SQLITE_BUSY`) when the lock
    ///   stays held past the busy timeout; what `body` throws (the refresh still happens).
    public func withWriteLock<T>(_ body: () throws -> T) throws -> T {
        guard let writer else { throw TandemError.readOnly(path: path) }
        defer { try? notifyChanged(tables: []) }
        return try writer.withExclusiveAccess { _ in try body() }
    }
}
