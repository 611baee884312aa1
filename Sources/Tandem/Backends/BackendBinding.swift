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
    ///
    /// A backend whose opening creates nothing (``BackendKind/opensWithoutCreating``: PostgreSQL)
    /// is opened first and its identifier checked on the connection it opened.
    /// - Throws: ``TandemError/invalidBackend(_:)`` when the database syncs with another backend,
    ///   or for the errors of ``openBackend(_:)``.
    public func openBackend(_ url: BackendURL) throws -> any SyncBackend {
        guard BackendRegistry.kind(for: url.scheme)?.opensWithoutCreating == true else {
            try checkBinding(to: url)
            return try Tandem.openBackend(url)
        }
        let backend: any SyncBackend
        do {
            backend = try Tandem.openBackend(url)
        } catch {
            // A server that is there but not set up is not the one this database syncs with:
            // refused as before opening; otherwise the error as it is.
            try checkBinding(to: url)
            throw error
        }
        let (boundID, boundName) = try binding()
        if let boundID, boundID != backend.identifier {
            throw database.bindingRefusal(boundName: boundName, name: url.name, detail: "")
        }
        return backend
    }

    /// The identifier and name of the backend this database syncs with (nil and empty: none yet).
    private func binding() throws -> (id: String?, name: String) {
        try database.read { tx in
            (try tx.stored(.backendID).stringValue, try tx.stored(.backendName).stringValue ?? "")
        }
    }

    /// Refuses `url` when this database syncs with another backend, reading only (the
    /// backend's identifier is read without creating or changing anything).
    /// - Throws: ``TandemError/invalidBackend(_:)`` for another backend; the backend kind's
    ///   errors when its identifier cannot be read (the server is down, say).
    public func checkBinding(to url: BackendURL) throws {
        let (boundID, boundName) = try binding()
        guard let boundID else { return }
        guard let kind = BackendRegistry.kind(for: url.scheme) else { throw TandemError.invalidBackend("unknown backend scheme '\(url.scheme)'") }
        let id = try kind.existingIdentifier(url)
        if id == boundID { return }
        throw database.bindingRefusal(boundName: boundName, name: url.name, detail: id == nil ? ", which does not exist (nothing was created)" : "")
    }
}
