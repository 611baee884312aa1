import Dispatch

/// Runs blocking `work` (a child process, a synchronous read) on a Dispatch thread and awaits
/// it, so that it holds no thread of Swift's shared concurrency pool.
package func awaitBlocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result(catching: work)) }
    }
}
