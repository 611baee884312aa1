import Foundation

extension SyncSession {
    /// Runs the connector's pulls (``SyncConnector/pulls``) every `interval` while this process
    /// owns sync, on a thread of its own; a session with another backend pulls nothing. Each
    /// pull that changed rows is reported as ``SyncEvent/downloaded(changes:)``, a failure as
    /// ``SyncEvent/error(_:)`` (tried again at the next interval).
    /// - Returns: a cancellable that stops the pulls, as releasing it does.
    public func pullInBackground(every interval: Duration = .seconds(60)) -> AnyDatabaseCancellable {
        OwnerIntervalWork(session: self, interval: interval, name: "tandem.pull") { session in
            guard let connector = (session.backend as? ConnectorBackend)?.connector else { return }
            for (pull, outcome) in BackgroundPulls.run(connector.pulls, on: session.database) {
                switch outcome {
                case .success(let result):
                    let changed = result.inserted + result.updated + result.deleted
                    if changed > 0 { session.report(.downloaded(changes: changed)) }
                case .failure(let error):
                    var failure = SyncFailure(error, databasePath: session.database.path)
                    failure.message = "the pull of \(pull.table) failed: \(failure.message)"
                    session.report(.error(failure))
                }
            }
        }.start()
    }
}

/// Pulls run one after another from a thread that is not part of Swift concurrency.
enum BackgroundPulls {
    static func run(_ pulls: [PayloadPull], on database: SharedDatabase) -> [(PayloadPull, Result<PullResult, any Error>)] {
        pulls.map { pull in
            let outcome = WorkAhead<PullResult>(thread: "tandem.pull.\(pull.table)") {
                let done = DispatchSemaphore(value: 0)
                let result = ResultBox()
                Task {
                    result.set(await Result { try await database.sync.pull(pull) })
                    done.signal()
                }
                done.wait()
                return try result.get()
            }
            return (pull, Result { try outcome.value() })
        }
    }

    /// A result handed from a task to the thread that waits for it.
    private final class ResultBox: @unchecked Sendable {
        // Invariant: written once before the semaphore is signalled, read after the wait.
        private var value: Result<PullResult, any Error>?
        func set(_ value: Result<PullResult, any Error>) { self.value = value }
        func get() throws -> PullResult { try value!.get() }
    }
}
