import Foundation

extension DatabaseSync {
    /// ``verify(with:repair:tables:)`` against the backend `url` names, opened for this call
    /// (and refused, before anything is read, when this database syncs with another backend).
    /// - Throws: ``TandemError/verificationFailed(_:)`` when the backend cannot verify (it does
    ///   not conform to ``VerifyingBackend``); what opening and verifying throw.
    public func verify(url: BackendURL, repair: Bool = false, tables: [String]? = nil) throws -> VerifyReport {
        let backend = try openBackend(url)
        guard let verifying = backend as? any VerifyingBackend else {
            throw TandemError.verificationFailed("the backend \(url.name) cannot verify (it does not compute checksums)")
        }
        return try verify(with: verifying, repair: repair, tables: tables)
    }
}
