/// A sync session is cancelled as live queries and change handlers are: ``cancel()`` is
/// ``stop()``.
extension SyncSession: DatabaseCancellable {
    /// Stops syncing and releases ownership (``stop()``).
    public func cancel() { stop() }
}
