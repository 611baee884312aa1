import Foundation

extension SharedDatabase {
    /// The path a database at `path` is opened under: absolute, standardized, symbolic links
    /// followed (up to 32). Nothing needs to be there yet.
    /// - Throws: ``TandemError/cannotOpen(path:reason:)`` for an empty path, a directory, a
    ///   FIFO, socket or device, a file with more than one hard link (SQLite would keep a WAL per
    ///   name and lose commits), or too many levels of symbolic links.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/howtocorrupt.html#_multiple_links_to_the_same_file
    public static func resolvedPath(_ given: String) throws -> String {
        guard !given.isEmpty else { throw TandemError.cannotOpen(path: given, reason: "the path is empty") }
        var path = URL(fileURLWithPath: given).standardizedFileURL.path
        for _ in 0..<32 {
            var info = stat()
            guard lstat(path, &info) == 0 else { return path }  // nothing there yet
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                // Each name of a hard-linked file gets its own -wal and -shm, so commits made
                // through one name are lost at the next checkpoint through the other.
                guard info.st_nlink <= 1 else {
                    throw TandemError.cannotOpen(
                        path: given,
                        reason: """
                            the file has \(info.st_nlink) hard links; SQLite keeps a separate WAL and -shm per name, so \
                            writers using different names would lose commits (https://www.sqlite.org/howtocorrupt.html#_multiple_links_to_the_same_file). \
                            Remove the extra links and open it through one name
                            """)
                }
                return path
            case S_IFLNK:
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) else { return path }
                let base = URL(fileURLWithPath: path).deletingLastPathComponent()
                path = (target.hasPrefix("/") ? URL(fileURLWithPath: target) : base.appendingPathComponent(target)).standardizedFileURL.path
            case S_IFDIR:
                throw TandemError.cannotOpen(path: given, reason: "it is a directory, not a database file")
            default:
                throw TandemError.cannotOpen(path: given, reason: "it is not a regular file (a FIFO, socket or device)")
            }
        }
        throw TandemError.cannotOpen(path: given, reason: "too many levels of symbolic links")
    }
}
