import Foundation

/// A client database syncs with one backend only: the first one records its id (`backend_id`)
/// and name (`backend_name`, with an absolute path) in `ps_kv`, because the download cursor and
/// the uploaded transaction ids belong to it.
extension DatabaseSync {
    /// Opens the backend `url` names for this database, after checking that it is the backend
    /// this database syncs with, if it syncs with one already. The same server file is
    /// recognised by its own id, whatever path names it; another backend is refused before its
    /// file is created or opened for writing.
    ///
    /// ```swift
    /// let url = try BackendURL("sqlite:server.db")      // relative to the current directory
    /// let backend = try db.sync.openBackend(url)
    /// let session = try db.sync.start(with: backend, backendName: url.name)
    /// ```
    /// - Throws: ``TandemError/invalidBackend(_:)`` when the database syncs with another backend,
    ///   or for the errors of ``openBackend(_:)``.
    public func openBackend(_ url: BackendURL) throws -> any SyncBackend {
        try checkBinding(to: url)
        return try Tandem.openBackend(url)
    }

    /// Refuses `url` when this database syncs with another backend, reading only (the
    /// backend's identifier is read without creating or changing anything).
    /// - Throws: ``TandemError/invalidBackend(_:)`` for another backend; the backend kind's
    ///   errors when its identifier cannot be read (the server is down, say).
    public func checkBinding(to url: BackendURL) throws {
        let (boundID, boundName) = try database.read { tx in
            (try tx.stored(.backendID).stringValue, try tx.stored(.backendName).stringValue ?? "")
        }
        guard let boundID else { return }
        guard let kind = BackendRegistry.kind(for: url.scheme) else { throw TandemError.invalidBackend("unknown backend scheme '\(url.scheme)'") }
        let id = try kind.existingIdentifier(url)
        if id == boundID { return }
        throw database.bindingRefusal(boundName: boundName, name: url.name, detail: id == nil ? ", which does not exist (nothing was created)" : "")
    }
}
