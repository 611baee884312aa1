import Foundation

/// A server file's identity, read without creating or changing anything.
extension EmbeddedBackend {
    /// The server id stored in the file at `path` (the id Tandem made when it created the file,
    /// ``SharedDatabase/clientID()``), read without creating or changing any file
    /// (``DatabaseFileSurvey``). Nil when nothing is at `path`; an empty string when the file
    /// holds no Tandem id.
    ///
    /// The id is made when the file is created and never changes, so it is read from the file
    /// as it is on disk (the `-shm` of a server in use is not touched); only when it is not there
    /// yet (still in the WAL) is the file read the usual way.
    /// - Throws: ``TandemError/invalidBackend(_:)`` when `path` is a directory or another
    ///   non-file, or the file is not an SQLite database.
    public static func identifier(ofFileAt path: String) throws -> String? {
        let path = try resolvedPath(path)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        if let id = try survey(path, onDiskOnly: true)?.clientID { return id }
        guard FileManager.default.fileExists(atPath: path + "-wal") else { return "" }
        return try survey(path)?.clientID ?? ""
    }
}
