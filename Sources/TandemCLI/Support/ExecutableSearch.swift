import Foundation

/// Executable files as `exec(3)`'s `execvp` finds them: a path as given, or a bare name in the
/// directories of `PATH`.
enum ExecutableSearch {
    /// True when `path` is a regular file this process may execute.
    static func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && access(path, X_OK) == 0
    }

    /// The first executable file named `name` in the directories of `PATH`, or nil.
    static func onPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first(where: isExecutableFile)
    }
}
