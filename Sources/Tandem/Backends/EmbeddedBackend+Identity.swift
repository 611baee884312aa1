import Foundation

/// A server file's identity, read without creating or changing anything.
extension EmbeddedBackend {
    /// The server id stored in the file at `path` (its `ps_kv` client id), read without creating
    /// or changing any file. Nil when nothing is at `path`; an empty string when the file holds
    /// no Tandem id.
    ///
    /// The id is made when the file is created and never changes, so it is read from the file
    /// as it is on disk; only when it is not there yet (still in the WAL of a file in use) is
    /// the file opened read-only the usual way.
    /// - Throws: ``TandemError/invalidBackend(_:)`` when `path` is a directory or another
    ///   non-file, or the file is not an SQLite database.
    public static func identifier(ofFileAt path: String) throws -> String? {
        let path = try resolvedPath(path)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard Opening.fileSize(path) > 0 else { return "" }
        do {
            let immutable = try Connection(path: path, readOnly: true, busyTimeoutMilliseconds: 0, immutable: true, rules: LayoutRules())
            if let id = try storedIdentifier(immutable) { return id }
            guard FileManager.default.fileExists(atPath: path + "-wal") else { return "" }
            let connection = try Opening.openReader(path: path, configuration: Configuration())
            return try storedIdentifier(connection) ?? ""
        } catch let error as SQLiteError where error.code == .notADatabase || error.code == .corrupt {
            throw TandemError.invalidBackend("'\(path)' is not a Tandem backend: \(error.message)")
        }
    }

    private static func storedIdentifier(_ connection: Connection) throws -> String? {
        try connection.storedIfPresent(.clientID).stringValue
    }
}
