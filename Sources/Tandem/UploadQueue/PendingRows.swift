import Foundation
import Synchronization

/// The rows (table, id) that have entries in the upload queue, which a download must not
/// overwrite, kept by the owner from pass to pass so that each download reads only the entries
/// queued since the last one instead of the whole queue (whose reading grew with the backlog).
///
/// The queue only grows at its end (entry ids are handed out in commit order under the write
/// lock) and loses entries only through the owner: uploads completed from its head, and
/// transactions set aside. So the rows are the ones read before, less those the owner removed,
/// plus the entries after the highest id read; a queue whose first entry is past the lowest one
/// read lost entries another way (a reset), and is read again whole.
final class PendingRows: Sendable {
    private struct State {
        /// Every entry read and not yet removed, in id order (entries are read in id order and
        /// removed mostly from the front): id, row, and false once set aside.
        var entries: [(id: Int64, row: RowKey, live: Bool)] = []
        var front = 0
        /// Entries per row.
        var counts: [RowKey: Int] = [:]
        /// The highest entry id read.
        var readThrough: Int64 = 0

        var lowest: Int64? { front < entries.count ? entries[front].id : nil }

        mutating func add(_ id: Int64, _ row: RowKey) {
            entries.append((id, row, true))
            counts[row, default: 0] += 1
            readThrough = max(readThrough, id)
        }

        mutating func forget(_ row: RowKey) {
            if let count = counts[row], count > 1 { counts[row] = count - 1 } else { counts[row] = nil }
        }

        mutating func removeThrough(_ id: Int64) {
            while front < entries.count, entries[front].id <= id {
                if entries[front].live { forget(entries[front].row) }
                front += 1
            }
            if front > 4096 && front * 2 > entries.count {
                entries.removeFirst(front)
                front = 0
            }
        }

        mutating func remove(_ ids: Set<Int64>) {
            for index in front..<entries.count where entries[index].live && ids.contains(entries[index].id) {
                entries[index].live = false
                forget(entries[index].row)
            }
        }
    }

    private let state = Mutex(State())

    /// The rows with queued entries (row → entries), read in `tx` (the download's write transaction).
    func rows(in tx: Transaction) throws -> [RowKey: Int] {
        let (after, lowest) = state.withLock { s in (s.readThrough, s.lowest) }
        if let lowest, try UploadQueueRows.firstID(in: tx).map({ $0 > lowest }) ?? true {
            state.withLock { $0 = State() }  // entries went that the owner did not remove
            return try rows(in: tx)
        }
        let added = try UploadQueueRows.rows(after: after, in: tx)
        return state.withLock { s in
            for (id, row) in added { s.add(id, row) }
            return s.counts
        }
    }

    /// Forgets the entries up to `id` (uploaded and completed).
    func removeThrough(_ id: Int64) {
        state.withLock { $0.removeThrough(id) }
    }

    /// Forgets the entries `ids` (a transaction set aside).
    func remove(_ ids: [Int64]) {
        state.withLock { $0.remove(Set(ids)) }
    }
}
