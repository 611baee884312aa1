import Foundation

extension SharedDatabase {
    /// Writes a consistent copy of the database to `destination` while writers keep going
    /// (SQLite's `VACUUM INTO` on a read snapshot). The copy holds the upload queue and the
    /// client id as they were: restoring it later (the copy replaces a lost file) keeps every
    /// queued write exactly once, as restored clients do (see DESIGN.md, "Backends").
    ///
    /// Related SQLite documentation: https://www.sqlite.org/lang_vacuum.html#vacuuminto
    /// - Throws: ``TandemError/cannotOpen(path:reason:)`` when `destination` exists or its
    ///   directory does not; ``SQLiteError`` on a write failure (a partial copy is removed).
    public func backup(to destination: String) throws {
        let target = URL(fileURLWithPath: destination).standardizedFileURL.path
        let directory = URL(fileURLWithPath: target).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw TandemError.cannotOpen(path: target, reason: "the directory '\(directory)' does not exist")
        }
        guard !FileManager.default.fileExists(atPath: target) else {
            throw TandemError.cannotOpen(path: target, reason: "it exists already; a backup never overwrites a file")
        }
        do {
            try readers.read { connection in
                try connection.execute("VACUUM INTO ?", [.text(target)])
            }
        } catch {
            try? FileManager.default.removeItem(atPath: target)
            throw error
        }
    }
}
