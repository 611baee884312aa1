import Foundation

/// A client database syncs with one backend only: the first one records its id (`backend_id`)
/// and name (`backend_name`) in `ps_kv`, because the download cursor and the uploaded
/// transaction ids belong to it (opening a backend by URL checks the same: `BackendBinding`).
extension SharedDatabase {
    /// Records the backend this database syncs with, or refuses a different one.
    /// - Throws: ``TandemError/invalidBackend(_:)`` when the database already syncs with another backend.
    func bind(to backend: any SyncBackend, name: String) throws {
        let id = backend.identifier
        try write { tx in
            let bound = try tx.stored(.backendID).stringValue
            if let bound, bound != id {
                let boundName = try tx.stored(.backendName).stringValue ?? ""
                throw bindingRefusal(boundName: boundName, name: name, detail: "")
            }
            if bound == nil {
                try tx.store(.backendID, id)
                try tx.store(.backendName, name)
            }
        }
    }

    /// Why this database refuses the backend `name`: it syncs with `boundName`.
    func bindingRefusal(boundName: String, name: String, detail: String) -> TandemError {
        .invalidBackend(
            "'\(path)' syncs with another backend\(boundName.isEmpty ? "" : " (\(boundName))") and cannot switch to \(name.isEmpty ? "this one" : "'\(name)'")\(detail): its download cursor and uploaded transaction ids belong to the first; sync a new client database instead"
        )
    }
}
