import Synchronization

extension AnyDatabaseCancellable {
    /// A stream of what a live query delivers: values until an error ends it; ending the stream
    /// (or cancelling its consumer) cancels the live query. `start` begins the live query.
    static func stream<T: Sendable>(_ start: (@escaping @Sendable (Result<T, Error>) -> Void) throws -> AnyDatabaseCancellable) -> AsyncThrowingStream<T, Error> {
        let (stream, continuation) = AsyncThrowingStream<T, Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        do {
            let observation = try start { result in
                switch result {
                case .success(let value): continuation.yield(value)
                case .failure(let error): continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in observation.cancel() }
        } catch {
            continuation.finish(throwing: error)
        }
        return stream
    }
}
