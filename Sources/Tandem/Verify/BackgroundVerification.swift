import Foundation
import Synchronization

extension SyncSession {
    /// Verifies this client against the server every `interval` while this process owns sync
    /// (``DatabaseSync/verify(with:repair:tables:)``, without repair), on a thread of its own.
    ///
    /// Each result is stored (``SyncStatus/lastVerification``, in every process's status) and
    /// reported through ``events``: ``SyncEvent/verified(_:)``, ``SyncEvent/driftFound(_:)`` (the
    /// rows that differ are named by a verification run by hand), or ``SyncEvent/error(_:)`` when
    /// it could not be made (a full sync due, the server unreachable: tried again at the next
    /// interval). A backend that does not verify (it does not conform to ``VerifyingBackend``)
    /// is never asked. A verification reads every synced row here and on the server (on
    /// PostgreSQL, on the owner's one connection, which uploads and downloads wait for while a
    /// table's checksum is computed); BENCHMARKS.md gives its cost.
    /// - Parameter interval: between verifications, the first one `interval` after the call.
    /// - Returns: a cancellable that stops the verifications (one that runs finishes first), as
    ///   releasing it does: keep it as long as the session. They stop by themselves when the
    ///   session stops.
    public func verifyInBackground(every interval: Duration = .seconds(900)) -> AnyDatabaseCancellable {
        OwnerIntervalWork(session: self, interval: interval, name: "tandem.verify") { session in
            guard let backend = session.backend as? any VerifyingBackend else { return }
            BackgroundVerification.verify(session, backend)
        }.start()
    }
}

/// One background verification (``SyncSession/verifyInBackground(every:)``), its result stored and reported.
enum BackgroundVerification {
    static func verify(_ session: SyncSession, _ backend: any VerifyingBackend) {
        let began = Date()
        do {
            let report = try session.database.sync.verify(with: backend)
            let result = LastVerification(report)
            session.report(report.agrees ? .verified(result) : .driftFound(result))
        } catch {
            let failure = SyncFailure(error, databasePath: session.database.path)
            try? LastVerification(at: began, agrees: false, differingRows: 0, repairedRows: 0, differingTables: [], error: failure.message).store(in: session.database)
            var reported = failure
            reported.message = "verification against the server failed: \(failure.message)"
            session.report(.error(reported))
        }
    }
}
