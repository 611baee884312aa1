import Synchronization

/// Something that delivers until it is cancelled: a live query (``DatabaseReader/observe(_:_:onChange:)``),
/// a change handler (``SharedDatabase/addChangeHandler(on:_:)``) or a sync session
/// (``SyncSession``). ``cancel()`` stops it: nothing is delivered after it returns except what
/// was being delivered at that moment; cancelling twice does nothing more.
///
/// The same contract as Combine's `Cancellable` and GRDB's `DatabaseCancellable`.
public protocol DatabaseCancellable: AnyObject, Sendable {
    /// Stops the deliveries; see the type's contract.
    func cancel()
}

/// A ``DatabaseCancellable`` that also cancels when it is released: keep it as long as the
/// live query or change handler should run.
public final class AnyDatabaseCancellable: DatabaseCancellable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Mutex(onCancel)
    }

    /// Stops the deliveries; nothing is delivered after this returns, except what is being delivered.
    public func cancel() {
        let action = onCancel.withLock { a -> (@Sendable () -> Void)? in
            defer { a = nil }
            return a
        }
        action?()
    }

    deinit { cancel() }
}
