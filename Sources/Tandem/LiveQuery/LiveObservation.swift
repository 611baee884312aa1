import Synchronization

/// Keeps a live query running; ``cancel()`` (or releasing the token) stops it.
public final class LiveObservation: Sendable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Mutex(onCancel)
    }

    /// Stops the live query; no result is delivered after this returns, except one already being delivered.
    public func cancel() {
        let action = onCancel.withLock { a -> (@Sendable () -> Void)? in
            defer { a = nil }
            return a
        }
        action?()
    }

    deinit { cancel() }
}
