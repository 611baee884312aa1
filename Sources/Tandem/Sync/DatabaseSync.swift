import Foundation

extension SharedDatabase {
    /// This database's sync with a backend: sessions (``DatabaseSync/start(with:backendName:)``),
    /// one-shot passes (``DatabaseSync/once(with:backendName:)``), the status and the binding.
    public var sync: DatabaseSync { DatabaseSync(database: self) }
}

/// The sync of one database (``SharedDatabase/sync``), as ``UploadQueue`` is its upload queue.
/// PowerSync's `connect`, `currentStatus`, `waitForFirstSync` and `disconnectAndClear` are the
/// model (https://docs.powersync.com/client-sdk-references/swift).
public struct DatabaseSync: Sendable {
    let database: SharedDatabase
}
