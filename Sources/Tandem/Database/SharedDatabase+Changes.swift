import Foundation
import Synchronization

extension SharedDatabase {
    /// Tells every process's live queries and change handlers that `tables` changed, for writes
    /// Tandem cannot see. Schema names (`notes`) stand for their data tables; other names are
    /// taken as SQLite table names. An empty set means "any table".
    /// - Throws: ``TandemError/readOnly(path:)`` on a read-only database; what a write transaction throws.
    public func notifyChanged(tables: Set<String>) throws {
        let raw = tables.isEmpty ? [InternalTables.anyTable] : Set(tables.map { schema.table(named: $0)?.dataTableName ?? $0 })
        try write(marking: raw, cancellation: nil) { _ in }
    }

    /// Every committed change, from this process or any other, as it is noticed. Nothing is
    /// dropped: while the consumer is behind, changes merge into one waiting element (the union
    /// of their tables, or unknown when any was).
    /// - Throws: when the change observer cannot start (an unreadable file).
    public func changes() throws -> AsyncStream<DatabaseChange> {
        let (stream, continuation) = AsyncStream<DatabaseChange>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let yielding = Mutex(())
        let token = try observer.subscribe { change, _ in
            yielding.withLock { _ in
                // A full buffer hands back the element it replaced: put back both, merged.
                if case .dropped(let older) = continuation.yield(change) {
                    _ = continuation.yield(older.merged(with: change))
                }
            }
        }
        continuation.onTermination = { [weak self] _ in self?.observer.unsubscribe(token) }
        return stream
    }

    /// Calls `handler` for every committed change, from this process or any other, until the
    /// returned cancellable is cancelled or released. For code that waits on threads rather than
    /// tasks.
    ///
    /// Delivery follows the rules of live queries: `handler` runs on `queue` (by default a serial
    /// queue of its own), one call at a time, in commit order, never on the thread that noticed
    /// the change, so a commit never waits for a handler, a slow handler delays only itself, and
    /// a handler may read and write the database. While it is behind, changes merge into one
    /// waiting change (the union of their tables, or unknown when any was): none is dropped.
    /// - Parameter queue: where `handler` runs; give a serial queue (a concurrent one would run
    ///   calls side by side).
    /// - Parameter handler: called with each change (or merged changes).
    /// - Throws: when the observer cannot start (see ``changes()``).
    public func addChangeHandler(on queue: DispatchQueue? = nil, _ handler: @escaping @Sendable (DatabaseChange) -> Void) throws -> AnyDatabaseCancellable {
        let delivery = ChangeDelivery(on: queue ?? DispatchQueue(label: "tandem.change-handler"), handler)
        let token = try observer.subscribe { change, _ in delivery.deliver(change) }
        return AnyDatabaseCancellable { [weak self] in
            delivery.finish()
            self?.observer.unsubscribe(token)
        }
    }

    /// Calls `handler` for every committed change, from this process or any other, on the thread
    /// that noticed it: Tandem's observer thread for other processes' commits, and the
    /// committing thread, before the write returns, for this process's own. For wake-ups that
    /// must not wait for a queue (signalling a condition or a semaphore), as GRDB's
    /// `DatabaseRegionObservation` is told of changes on the writer's queue: the handler must
    /// return quickly and must not write (a write there would be nested in the commit's: a
    /// ``TandemError/misuse(_:)``); it may read. Everything else belongs in
    /// ``addChangeHandler(on:_:)``.
    /// - Throws: when the observer cannot start (see ``changes()``).
    public func addImmediateChangeHandler(_ handler: @escaping @Sendable (DatabaseChange) -> Void) throws -> AnyDatabaseCancellable {
        let token = try observer.subscribe { change, _ in handler(change) }
        return AnyDatabaseCancellable { [weak self] in self?.observer.unsubscribe(token) }
    }

    /// Calls `handler` on Tandem's observer thread as soon as another process may have committed
    /// (its wake-up arrived), before Tandem reads which tables changed, until the returned
    /// cancellable is cancelled or released. The call says nothing of what changed: it is for a
    /// thread that reads the state it waits for anyway (a sync loop, a backend's waiter), which
    /// is woken one read earlier than by ``addImmediateChangeHandler(_:)`` (tens of
    /// microseconds). Calls may be spurious: another process's commit of a table the waiter does
    /// not read, or rarely one of this process's own, whose wake-ups are otherwise passed over
    /// (one that restarted the WAL cannot be told from another's). Commits only the backstop
    /// poll notices (writers that wake no one, every ``Configuration/changePollInterval``) come
    /// to change handlers alone. The handler must return quickly and must not write.
    /// - Throws: when the observer cannot start (see ``changes()``).
    public func addWakeUpHandler(_ handler: @escaping @Sendable () -> Void) throws -> AnyDatabaseCancellable {
        let token = try observer.subscribeToWakeUps(handler)
        return AnyDatabaseCancellable { [weak self] in self?.observer.unsubscribe(token) }
    }

    /// Why this process notices other processes' commits by polling (every
    /// ``Configuration/changePollInterval``) rather than at once: inotify is unavailable (the
    /// user's inotify instances or watches are used up, or the filesystem has none). Nil while
    /// inotify works or before anything observes changes. Live queries and sync keep working
    /// either way, only later.
    ///
    /// Related documentation: https://man7.org/linux/man-pages/man7/inotify.7.html (limits in /proc/sys/fs/inotify)
    public var changeWakeupUnavailableReason: String? { observer.pollingReason }

    /// ``changeWakeupUnavailableReason`` as a sentence for a log: "inotify is unavailable
    /// (reason); other processes' commits are noticed every N s", or nil.
    public var changePollingNotice: String? {
        changeWakeupUnavailableReason.map { "inotify is unavailable (\($0)); other processes' commits are noticed every \(configuration.changePollInterval.seconds) s" }
    }
}
