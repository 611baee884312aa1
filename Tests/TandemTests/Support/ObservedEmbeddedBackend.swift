import Foundation
import Synchronization
@testable import Tandem

/// The embedded backend (whose waits its own uploads do not wake), counting its uploads and
/// fetches and noting each fetch's cursor; `beforeFirstFetch` runs before the first fetch answers,
/// `beforeUpload` before each upload (given its number, from 1); ``interrupted`` is raised when
/// the engine interrupts the waits (its stop does).
final class ObservedEmbeddedBackend: SyncBackend, @unchecked Sendable {
    let inner: EmbeddedBackend
    let uploads = Atomic<Int>(0), fetches = Atomic<Int>(0)
    let cursors = Mutex<[String]>([])
    let interrupted = WakeFlag()
    private let beforeFirstFetch: () throws -> Void
    private let beforeUpload: (Int) -> Void
    var identifier: String { inner.identifier }

    init(_ inner: EmbeddedBackend, beforeUpload: @escaping (Int) -> Void = { _ in }, beforeFirstFetch: @escaping () throws -> Void = {}) {
        self.inner = inner
        self.beforeUpload = beforeUpload
        self.beforeFirstFetch = beforeFirstFetch
    }

    func upload(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws {
        beforeUpload(uploads.add(1, ordering: .relaxed).newValue)
        try inner.upload(transactions, clientID: clientID, epoch: epoch)
    }

    func fetchChanges(after cursor: String, limit: Int) throws -> ChangeBatch {
        if fetches.add(1, ordering: .relaxed).newValue == 1 { try beforeFirstFetch() }
        cursors.withLock { $0.append(cursor) }
        return try inner.fetchChanges(after: cursor, limit: limit)
    }

    func waitForChanges(after cursor: String, timeout: Duration) throws -> String? {
        try inner.waitForChanges(after: cursor, timeout: timeout)
    }

    func interruptWaits() {
        interrupted.raise()
        inner.interruptWaits()
    }
}
