import Foundation

/// The process's limit on open file descriptors (`ulimit -n`, `RLIMIT_NOFILE`), for errors that
/// come from reaching it: `EMFILE` (this process) or `ENFILE` (the whole system). Without it,
/// SQLite says only "unable to open database file".
public enum DescriptorLimit {
    /// The soft limit on open files, or nil when it cannot be read or is unlimited.
    public static var current: UInt64? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return UInt64(limit.rlim_cur)
    }

    /// The reason for `code` in words, naming the limit for `EMFILE` and `ENFILE`:
    /// `Too many open files (EMFILE: the process reached its limit of 12 open files; raise it with ulimit -n)`.
    public static func reason(errno code: Int32) -> String {
        let text = String(cString: strerror(code))
        guard let hint = hint(errno: code) else { return text }
        return "\(text) (\(hint))"
    }

    /// What `EMFILE` or `ENFILE` mean here, or nil for another `errno`.
    public static func hint(errno code: Int32) -> String? {
        switch code {
        case EMFILE:
            return "EMFILE: the process reached its limit of \(current.map(String.init) ?? "?") open files; raise it with ulimit -n"
        case ENFILE:
            return "ENFILE: the system's table of open files is full"
        default:
            return nil
        }
    }

    /// How many more descriptors this process can open, counted up to `enough` (each is opened
    /// on /dev/null and closed again).
    public static func available(upTo enough: Int) -> Int {
        var opened: [Int32] = []
        defer { for fd in opened { close(fd) } }
        while opened.count < enough {
            let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
            if fd < 0 {
                if errno == EINTR { continue }
                break
            }
            opened.append(fd)
        }
        return opened.count
    }
}
