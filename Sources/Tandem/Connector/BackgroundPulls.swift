import Foundation

extension SyncSession {
    /// Runs the connector's pulls (``SyncConnector/pulls``) every `interval` while this process
    /// owns sync, on a thread of its own; a session with another backend pulls nothing. Each
    /// pull that changed rows is reported as ``SyncEvent/downloaded(changes:)``, a failure as
    /// ``SyncEvent/error(_:)`` (tried again at the next interval).
    /// - Returns: a cancellable that stops the pulls, as releasing it does.
    public func pullInBackground(every interval: Duration = .seconds(60)) -> AnyDatabaseCancellable {
        OwnerIntervalWork(session: self, interval: interval, name: "tandem.pull") { session in
            guard let backend = session.backend as? ConnectorBackend else { return }
            for (pull, outcome) in BackgroundPulls.run(backend, on: session.database) {
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

/// Pulls run one after another on the connector's thread, from the thread that waits for them.
enum BackgroundPulls {
    static func run(_ backend: ConnectorBackend, on database: SharedDatabase) -> [(PayloadPull, Result<PullResult, any Error>)] {
        backend.connector.pulls.map { pull in
            (pull, Result { try backend.wait(for: "the pull of \(pull.table)", bounded: false) { try await database.sync.pull(pull) } })
        }
    }
}
