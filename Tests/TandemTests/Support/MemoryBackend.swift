import Foundation
import Synchronization
@testable import Tandem

/// A backend held in memory, following the same contract and conflict rule as the embedded
/// backend: for fast sync tests and the conformance suite, with no files and no processes.
final class MemoryBackend: SyncBackend {
    private struct State {
        var rows: [String: [String: JSONValue]] = [:]  // "table\u{0}id" -> columns
        var log: [(version: Int64, txn: Int64, change: ServerChange)] = []
        var applied: [String: String] = [:]  // "client\u{0}tx" -> digest
        var epochs: [String: Int64] = [:]
        var transactions: Int64 = 0
    }

    private let state = Mutex(State())
    private let wake = WakeFlag()
    let identifier = UUID().uuidString

    func upload(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws {
        try state.withLock { s in
            let seen = s.epochs[clientID] ?? 0
            guard epoch >= seen else { throw TandemError.staleEpoch(held: epoch, current: seen) }
            s.epochs[clientID] = epoch
            // One batch is one server transaction: a refusal applies none of it.
            let before = s
            for transaction in transactions {
                let key = "\(clientID)\u{0}\(transaction.transactionID)"
                let digest = transaction.digest
                if let applied = s.applied[key] {
                    if applied == digest { continue }
                    let highest =
                        before.applied.keys.filter { $0.hasPrefix(clientID + "\u{0}") }
                        .compactMap { Int64($0.split(separator: "\u{0}").last ?? "") }.max() ?? 0
                    s = before
                    throw TandemError.transactionConflict(clientID: clientID, transactionID: transaction.transactionID, highest: highest)
                }
                s.transactions += 1
                for entry in transaction.entries {
                    let rowKey = "\(entry.table)\u{0}\(entry.rowID)"
                    switch entry.op {
                    case .put: s.rows[rowKey] = entry.data ?? [:]
                    case .patch:
                        // The delete wins: a PATCH of a missing row changes nothing.
                        if var row = s.rows[rowKey] {
                            for (column, value) in entry.data ?? [:] { row[column] = value == .null ? nil : value }
                            s.rows[rowKey] = row
                        }
                    case .delete: s.rows[rowKey] = nil
                    }
                    let change =
                        s.rows[rowKey].map {
                            ServerChange(op: .put, table: entry.table, rowID: entry.rowID, data: JSONValue.object($0).jsonText)
                        } ?? ServerChange(op: .delete, table: entry.table, rowID: entry.rowID, data: nil)
                    s.log.append((Int64(s.log.count + 1), s.transactions, change))
                }
                s.applied[key] = digest
            }
        }
        wake.raise()
    }

    func fetchChanges(after cursor: String, limit: Int) throws -> ChangeBatch {
        let after = Int64(cursor) ?? 0
        return state.withLock { s in
            var batch = s.log.filter { $0.version > after }.prefix(max(1, limit)).map { $0 }
            if let last = batch.last {
                batch += s.log.filter { $0.txn == last.txn && $0.version > last.version }  // whole transactions
            }
            let next = batch.last?.version ?? after
            return ChangeBatch(
                changes: batch.map(\.change), nextCursor: batch.isEmpty ? cursor : String(next),
                hasMore: s.log.contains { $0.version > next })
        }
    }

    func waitForChanges(after cursor: String, timeout: Duration) throws -> String? {
        let deadline = Date(timeIntervalSinceNow: timeout.seconds)
        while true {
            let newest = state.withLock { $0.log.last?.version ?? 0 }
            if newest > Int64(cursor) ?? 0 { return String(newest) }
            if !wake.wait(timeout: deadline.timeIntervalSinceNow) { return nil }
        }
    }

    func interruptWaits() { wake.raise() }

    /// Every row, as (table, id, JSON), ordered.
    func rows() -> [(table: String, id: String, data: String)] {
        state.withLock { s in
            s.rows.map { key, row in
                let parts = key.split(separator: "\u{0}", maxSplits: 1).map(String.init)
                return (parts[0], parts[1], JSONValue.object(row).jsonText)
            }.sorted { ($0.table, $0.id) < ($1.table, $1.id) }
        }
    }
}

/// A backend that refuses for good every transaction touching a row whose id starts with "bad",
/// and hands the others to a ``MemoryBackend``; `beforeUpload` sees each batch as it comes.
final class RefusingBackend: SyncBackend, @unchecked Sendable {
    // Invariant: `beforeUpload` is set before the first upload and not changed after.
    let inner = MemoryBackend()
    var beforeUpload: (([CrudTransaction]) throws -> Void)?
    var identifier: String { inner.identifier }
    func upload(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws {
        try beforeUpload?(transactions)
        if let entry = transactions.flatMap(\.entries).first(where: { $0.rowID.hasPrefix("bad") }) {
            throw TandemError.uploadRejected(table: entry.table, rowID: entry.rowID, reason: "a constraint refuses it")
        }
        try inner.upload(transactions, clientID: clientID, epoch: epoch)
    }
    func fetchChanges(after cursor: String, limit: Int) throws -> ChangeBatch { try inner.fetchChanges(after: cursor, limit: limit) }
    func waitForChanges(after cursor: String, timeout: Duration) throws -> String? { try inner.waitForChanges(after: cursor, timeout: timeout) }
    func interruptWaits() { inner.interruptWaits() }
}
