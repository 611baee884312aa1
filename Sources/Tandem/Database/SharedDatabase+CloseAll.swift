import Synchronization

extension SharedDatabase {
    /// The databases this process opened and has not released, weakly.
    private static let opened = Mutex<[ObjectIdentifier: WeakDatabase]>([:])

    private struct WeakDatabase: @unchecked Sendable {
        weak var database: SharedDatabase?
    }

    /// Closes every database this process opened (their backends' files too), as a program
    /// does before it exits: each file whose last user this process was is left whole in its
    /// main file (see ``close()``).
    ///
    /// ```swift
    /// SharedDatabase.closeAll()
    /// exit(0)
    /// ```
    public static func closeAll() {
        let open = opened.withLock { $0.values.compactMap(\.database) }
        for database in open { database.close() }
    }

    /// True when this process has a database open at `path` (a resolved path) or on its file.
    static func isOpenInThisProcess(_ path: String) -> Bool {
        let file = FileIdentity(path: path)
        return opened.withLock { $0.values.compactMap(\.database) }.contains { $0.path == path || (file != nil && $0.openedFile == file) }
    }

    /// Records a database just opened, for ``closeAll()``.
    func registerOpened() {
        let key = ObjectIdentifier(self)
        SharedDatabase.opened.withLock { $0[key] = WeakDatabase(database: self) }
        DatabaseScope.current?.record(self)
    }

    /// Forgets a database that closed.
    func unregisterOpened() {
        let key = ObjectIdentifier(self)
        SharedDatabase.opened.withLock { _ = $0.removeValue(forKey: key) }
    }
}

/// The databases opened by one task and the tasks it starts: what a command run inside another
/// program closes when it ends, where a command run as a process closes all of them
/// (``SharedDatabase/closeAll()``).
package final class DatabaseScope: Sendable {
    /// The scope of the running task, if it has one.
    @TaskLocal package static var current: DatabaseScope?

    private let opened = Mutex<[WeakDatabase]>([])

    private struct WeakDatabase: @unchecked Sendable {
        weak var database: SharedDatabase?
    }

    package init() {}

    fileprivate func record(_ database: SharedDatabase) {
        opened.withLock { $0.append(WeakDatabase(database: database)) }
    }

    /// Closes every database opened in the scope that is still open.
    package func closeAll() {
        for database in opened.withLock({ $0.compactMap(\.database) }) { database.close() }
    }
}
