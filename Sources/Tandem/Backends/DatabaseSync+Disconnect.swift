import Foundation

extension DatabaseSync {
    /// Unbinds this database from its backend so that it can sync with another (PowerSync's
    /// `disconnectAndClear`): removes the synced tables' rows, the rows waiting for undeclared
    /// tables, the download cursor, the backend binding and the sync status, in one write
    /// transaction. Local-only tables are kept. The next sync starts fresh from the new backend.
    /// - Parameter discardPending: also drop the upload queue; without it, a database with queued
    ///   writes is refused (they would be lost), saying how many.
    /// - Returns: how many queued CRUD entries were discarded and rows deleted.
    /// - Throws: ``TandemError/notOwner(path:ownerPID:)`` while a process owns sync;
    ///   ``TandemError/invalidBackend(_:)`` when uploads are pending and `discardPending` is false.
    @discardableResult
    public func disconnectAndClear(discardPending: Bool = false) throws -> ClearedData {
        if FileLock.isHeld(path: database.files.ownerLock) {
            throw TandemError.notOwner(path: database.path, ownerPID: nil)
        }
        return try database.write { tx in
            let pending = try UploadQueue.count(in: tx)
            if pending > 0 && !discardPending {
                throw TandemError.invalidBackend(
                    "'\(database.path)' has \(pending) queued upload entr\(pending == 1 ? "y" : "ies") that the backend has not received; upload them first, or discard them")
            }
            try UploadQueue.clear(in: tx)
            var cleared = ClearedData(discardedUploads: pending)
            for table in database.schema.tables where !table.localOnly && !table.insertOnly {
                cleared.deletedRows[table.name] = Int(try tx.scalar("SELECT count(*) FROM \(table.quotedDataTable)").int64Value ?? 0)
                try tx.executeOwn("DELETE FROM \(table.quotedDataTable)")
            }
            cleared.deletedWaitingRows = try UntypedRows.count(in: tx)
            try UntypedRows.clear(in: tx)
            try DownloadStage.clear(in: tx)
            for key in [StoredKey.cursor, .backendID, .backendName, .syncStatus, .downloading] { try tx.removeStored(key) }
            return cleared
        }
    }
}

/// What ``DatabaseSync/disconnectAndClear(discardPending:)`` removed from this host (the
/// backend keeps its rows).
public struct ClearedData: Sendable, Equatable {
    /// Queued upload entries discarded.
    public var discardedUploads = 0
    /// Rows deleted, per synced table.
    public var deletedRows: [String: Int] = [:]
    /// Downloaded rows deleted that waited for tables this database does not declare.
    public var deletedWaitingRows = 0
}
