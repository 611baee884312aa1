import Foundation

/// A file's device and inode: they stay when the file is renamed, and differ when a path comes
/// to name another file (deleted and created again, a backup copied over it).
struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The identity of the file `path` names, or nil when `stat(2)` fails (`errno` says why).
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

extension SharedDatabase {
    /// Why ``path`` no longer names the file this database opened, or nil while it does.
    ///
    /// A process keeps the file it opened, even after that file was deleted or replaced (a
    /// database removed and created again, a backup copied over it): it reads and writes the old
    /// file, which no other process sees, and its live queries never see what is written to the
    /// new one. Long-running programs (`tandem watch`) check this and stop.
    public var fileReplacement: String? {
        guard let opened = openedFile else { return nil }
        guard let current = FileIdentity(path: path) else {
            return errno == ENOENT ? "'\(path)' was deleted" : nil
        }
        return current == opened ? nil : "'\(path)' was replaced by another file"
    }
}
