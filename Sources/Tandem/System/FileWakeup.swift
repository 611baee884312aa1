import Foundation

/// Wakes waiters when a named file in a directory is written: one inotify instance with a watch
/// on the **file** (its reads and writes) and one on its **directory** for the file's creation or
/// replacement only (a watch on the file alone breaks when the file is replaced; one on the
/// directory alone for reads and writes would wake for every write to the database's `-wal`
/// beside it, about ten per commit).
///
/// ``signal(fd:)`` reads the file's one byte, which raises `IN_ACCESS` for every watcher without
/// dirtying the file or its inode (cheaper than a write); every process with a `FileWakeup` on it wakes.
/// Wake-ups carry no data: they can be coalesced or spurious, and waiters re-read state from the
/// database.
///
/// Related documentation: https://man7.org/linux/man-pages/man7/inotify.7.html
final class FileWakeup: @unchecked Sendable {
    // Invariant: the descriptors are fixed after init and closed once in deinit; `wait` is called
    // from one thread at a time (the owner's loop thread); `interrupt` may be called from any thread.
    let path: String
    private let name: String
    private let directory: String
    /// -1 when inotify is unavailable: waits then last their whole timeout (the caller's backstop poll).
    private let inotifyFD: Int32
    /// The directory's watch descriptor (creation and renames into it); events of any other
    /// watch are the file's.
    private let directoryWD: Int32
    /// Why inotify is unavailable (instances or watches used up, no inotify on this filesystem), or nil.
    let unavailableReason: String?
    /// ``interrupt()`` pokes it; the poll watches it.
    private let interrupts: SelfPipe

    enum Event { case changed, overflow, timeout, interrupted }

    /// Watches `path` and its directory. When inotify cannot be used (`inotify_init1` fails with
    /// EMFILE, `inotify_add_watch` with ENOSPC, or the filesystem has no inotify), the wake-up
    /// still works by polling: ``unavailableReason`` says why, and ``wait(timeoutMilliseconds:)``
    /// returns at its timeout.
    /// - Throws: ``SystemError`` when the interrupt pipe cannot be made.
    init(path: String) throws {
        self.path = path
        let url = URL(fileURLWithPath: path)
        self.name = url.lastPathComponent
        let directory = url.deletingLastPathComponent().path
        self.directory = directory
        interrupts = try SelfPipe()
        var inotifyFD: Int32 = -1
        var reason: String?
        var directoryWD: Int32 = -1
        do {
            inotifyFD = try syscall("inotify_init1(2)", path: directory) { inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK)) }
            // The directory first, so that a file created after it is seen either way.
            directoryWD = try syscall("inotify_add_watch(2)", path: directory) {
                inotify_add_watch(inotifyFD, directory, UInt32(IN_CREATE | IN_MOVED_TO))
            }
        } catch {
            if inotifyFD >= 0 { close(inotifyFD) }
            inotifyFD = -1
            reason = "\(error)"
        }
        self.inotifyFD = inotifyFD
        self.directoryWD = directoryWD
        self.unavailableReason = reason
        watchFile()
    }

    /// Watches the file (again, after it was created or replaced); while it does not exist, the
    /// directory's watch reports its creation.
    private func watchFile() {
        guard inotifyFD >= 0 else { return }
        let mask = UInt32(IN_ACCESS | IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE)
        if inotify_add_watch(inotifyFD, path, mask) < 0, errno != ENOENT {
            // No watch left for the file (ENOSPC, say): the directory's watch takes its events
            // for every name, filtered on the file's, as one watch.
            _ = inotify_add_watch(inotifyFD, directory, UInt32(IN_CREATE | IN_MOVED_TO) | mask)
        }
    }

    deinit {
        if inotifyFD >= 0 { close(inotifyFD) }
    }

    /// True when inotify has queued an event, of any watch, that a wait would read now (for tests:
    /// writes to other files in the directory must queue none).
    var hasQueuedEvents: Bool {
        var fd = pollfd(fd: inotifyFD, events: Int16(POLLIN), revents: 0)
        return inotifyFD >= 0 && poll(&fd, 1, 0) > 0
    }

    /// Makes a pending or the next ``wait(timeoutMilliseconds:)`` return `.interrupted`.
    func interrupt() {
        interrupts.poke()
    }

    /// Blocks until the file is written, the queue overflows, the timeout passes (ms; -1 waits
    /// forever) or ``interrupt()`` is called.
    func wait(timeoutMilliseconds: Int32) -> Event {
        var fds = [
            pollfd(fd: inotifyFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: interrupts.readFD, events: Int16(POLLIN), revents: 0),
        ]
        let deadline = timeoutMilliseconds < 0 ? nil : DispatchTime.now().uptimeNanoseconds + UInt64(timeoutMilliseconds) * 1_000_000
        while true {
            var remaining = timeoutMilliseconds
            if let deadline {
                let now = DispatchTime.now().uptimeNanoseconds
                if now >= deadline { return .timeout }
                remaining = Int32((deadline - now + 999_999) / 1_000_000)
            }
            let n = poll(&fds, 2, remaining)  // poll(2) skips a negative fd: without inotify, only the pipe
            if n < 0 { if errno == EINTR { continue }; return .timeout }
            if n == 0 { return .timeout }
            if fds[1].revents != 0 {
                interrupts.take()
                return .interrupted
            }
            switch drain() {
            case .some(let event): return event
            case .none: continue  // events for other files in the directory
            }
        }
    }

    /// Reads all queued events; returns `.changed`/`.overflow` if one concerns the file.
    private func drain() -> Event? {
        var result: Event?
        let size = 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let n = read(inotifyFD, buffer, size)
            if n <= 0 { return result }
            var offset = 0
            while offset < n {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let headerSize = MemoryLayout<inotify_event>.size
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    result = .overflow
                } else if event.wd != directoryWD {
                    // The file's watch: read or written, or gone (IN_IGNORED: deleted or replaced,
                    // which the directory's event follows).
                    if event.mask & UInt32(IN_IGNORED) == 0, result == nil { result = .changed }
                } else if event.len > 0 {
                    let namePointer = buffer.advanced(by: offset + headerSize).assumingMemoryBound(to: CChar.self)
                    if String(cString: namePointer) == name {
                        if event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 { watchFile() }  // a new file under the name
                        if result == nil { result = .changed }
                    }
                }
                offset += headerSize + Int(event.len)
            }
        }
    }

    /// Opens the file to signal (creating it with one byte if needed).
    static func openForSignalling(path: String, mode: mode_t) throws -> Int32 {
        let fd = try openSidecar(path: path, flags: O_RDWR, mode: mode)
        var stats = stat()
        if fstat(fd, &stats) == 0, stats.st_size == 0 {
            var byte: UInt8 = 1
            if pwrite(fd, &byte, 1, 0) != 1 {
                let code = errno
                close(fd)
                throw SystemError(call: "write(2)", path: path, errno: code)
            }
        }
        return fd
    }

    /// Reads one byte of the file at `fd` (from ``openForSignalling(path:mode:)``), waking every watcher.
    static func signal(fd: Int32) {
        var byte: UInt8 = 0
        _ = pread(fd, &byte, 1, 0)
    }
}
