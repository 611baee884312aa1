import Foundation

/// The processes that have a file open: by their descriptors (`/proc/PID/fd`, for the processes
/// this user may look into) and by the POSIX locks SQLite keeps on a database while a connection
/// has it open (`F_GETLK`, which names a holder of any user).
enum FileUsers {
    /// A process that has one of the files open: its pid and its command line (or nil when unknown).
    struct User: Equatable, Sendable {
        var pid: Int32
        var command: String?

        /// `process 1234 (tandem watch a.db)`.
        var description: String { "process \(pid)" + (command.map { " (\($0))" } ?? "") }
    }

    /// Every other process that has one of `paths` open, by pid.
    static func processes(using paths: [String]) -> [User] {
        let files = Set(paths.compactMap(identity(of:)))
        guard !files.isEmpty else { return [] }
        var pids = Set<Int32>()
        let me = getpid()
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), pid != me else { continue }
            let fdDirectory = "/proc/\(pid)/fd"
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: fdDirectory)) ?? [] {
                if let file = identity(of: fdDirectory + "/" + fd), files.contains(file) {
                    pids.insert(pid)
                    break
                }
            }
        }
        for path in paths {
            if let holder = LockSafeFiles.lockHolder(path, of: paths[0]), holder != me { pids.insert(holder) }
        }
        return pids.sorted().map { User(pid: $0, command: commandLine(of: $0)) }
    }

    private struct Identity: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    /// The device and inode of the file `path` names (following links), or nil.
    private static func identity(of path: String) -> Identity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// The first words of a process's command line (at most 80 characters), or nil.
    static func commandLine(of pid: Int32) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), !data.isEmpty else { return nil }
        let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        guard let first = words.first else { return nil }
        let text = ([URL(fileURLWithPath: first).lastPathComponent] + words.dropFirst()).joined(separator: " ")
        let printable = String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
        return printable.count > 80 ? String(printable.prefix(79)) + "…" : printable
    }
}
