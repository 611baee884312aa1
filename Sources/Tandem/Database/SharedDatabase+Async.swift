import Foundation

/// Reads and writes for Swift concurrency: the async overloads of ``read(_:)`` and ``write(_:)``
/// (in an async context, `try await db.write { … }`; GRDB names them the same way). The work,
/// and any wait for the cross-process write lock, runs on Tandem's own threads, never on a
/// thread of the cooperative pool; cancelling the task ends a wait for the write lock with
/// `CancellationError`.
extension SharedDatabase {
    private static let blockingWork = DispatchQueue(label: "tandem.async", attributes: .concurrent)

    /// ``read(_:)`` from a task: `body` runs on one of Tandem's threads.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T {
        try Task.checkCancellation()
        return try await withCheckedThrowingContinuation { continuation in
            SharedDatabase.blockingWork.async {
                continuation.resume(with: Result { try self.read(body) })
            }
        }
    }

    /// ``write(_:)`` from a task: `body` runs on one of Tandem's threads; cancelling the task
    /// while it waits for the write lock throws `CancellationError` and writes nothing.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T {
        try Task.checkCancellation()
        guard writer != nil else { throw TandemError.readOnly(path: path) }
        let cancellation = LockWatchdog.Cancellation()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                SharedDatabase.blockingWork.async {
                    continuation.resume(with: Result { try self.write(marking: [], cancellation: cancellation, body) })
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
    }
}
