import Foundation
import Tandem

/// A child process started with `posix_spawn(3)`: standard input from /dev/null (or this
/// process's, or a file), standard output and error to pipes (or /dev/null, or this process's).
///
/// Foundation's `Process.run()` crashes intermittently on Linux when a program spawns many
/// children (swift-corelibs-foundation issues 4772, 4795, 4810), so Tandem spawns directly.
public struct Subprocess: Sendable {
    public let pid: pid_t
    /// The read end of the child's standard output, or -1.
    public let stdoutFD: Int32
    /// The read end of the child's standard error, or -1.
    public let stderrFD: Int32

    /// Where a child's output stream goes.
    public enum Stream: Sendable { case pipe, discard, inherit }

    /// Pipes are made and the child spawned under one lock, so that no child spawned by another
    /// thread inherits a pipe end in the moment before it is marked close-on-exec.
    private static let spawnLock = NSLock()

    /// - Parameters:
    ///   - environment: the child's whole environment; nil inherits this process's.
    ///   - stdout, stderr: pipe the stream back, discard it, or share this process's.
    ///   - inheritsStdin: the child reads this process's standard input (else /dev/null).
    ///   - stdinFile: an open file the child reads as its standard input instead, from the
    ///     file's offset (the caller keeps and closes its descriptor).
    ///   - ownProcessGroup: the child leads a process group of its own, so that
    ///     ``signalGroup(_:)`` reaches what it starts too (a shell's commands).
    /// - Throws: ``Tandem/SystemError`` naming the call and the executable.
    public static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        stdout: Stream = .pipe, stderr: Stream = .pipe, inheritsStdin: Bool = false, stdinFile: Int32? = nil,
        ownProcessGroup: Bool = false
    ) throws -> Subprocess {
        spawnLock.lock()
        defer { spawnLock.unlock() }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdinFile {
            posix_spawn_file_actions_adddup2(&actions, stdinFile, 0)
        } else if !inheritsStdin {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }

        var parentEnds: [Int32] = []
        var childEnds: [Int32] = []
        defer { childEnds.forEach { close($0) } }
        for (target, stream) in [(Int32(1), stdout), (Int32(2), stderr)] {
            switch stream {
            case .pipe:
                var fds: [Int32] = [0, 0]
                guard pipe(&fds) == 0 else {
                    parentEnds.filter { $0 >= 0 }.forEach { close($0) }
                    throw SystemError(call: "pipe(2)", path: executable, errno: errno)
                }
                for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
                parentEnds.append(fds[0])
                childEnds.append(fds[1])
                posix_spawn_file_actions_adddup2(&actions, fds[1], target)
            case .discard:
                parentEnds.append(-1)
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .inherit:
                parentEnds.append(-1)
            }
        }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envStrings = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let envp = envStrings.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }

        // The child starts with default signal handling and no blocked signals, whatever this
        // process ignores (SIGPIPE) or handles (SIGINT and SIGTERM in long-running commands).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        if ownProcessGroup { posix_spawnattr_setpgroup(&attributes, 0) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | (ownProcessGroup ? POSIX_SPAWN_SETPGROUP : 0)))

        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else {
            parentEnds.filter { $0 >= 0 }.forEach { close($0) }
            throw SystemError(call: "posix_spawn(3)", path: executable, errno: rc)
        }
        return Subprocess(pid: pid, stdoutFD: parentEnds[0], stderrFD: parentEnds[1])
    }

    /// Waits for the child to exit; returns its exit status, or 128 + the signal that ended it.
    public func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Returns the exit status if the child has exited (reaping it), else nil.
    public func poll() -> Int32? {
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        guard result == pid else { return nil }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    public func signal(_ number: Int32) { _ = kill(pid, number) }

    /// Signals the child's process group (spawned with `ownProcessGroup`).
    public func signalGroup(_ number: Int32) { _ = kill(-pid, number) }
}

/// Reads lines from `fd` on a new thread until end of file, stamping each with the
/// CLOCK_MONOTONIC microsecond it was read at; closes `fd` at the end, then calls `onEnd`.
func readLines(
    from fd: Int32, name: String, onLine: @escaping @Sendable (String, Int64) -> Void,
    onEnd: @escaping @Sendable () -> Void = {}
) {
    let thread = Thread {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            let now = monotonicMicroseconds()
            // Only the bytes just read are searched for line ends (what was left holds none), and
            // the rest of the last line is moved to the front once: searching the whole buffer
            // at every read, and taking each line off its front, were quadratic (a 7 MB line,
            // `tandem export`'s JSON array, took 57 s to read in a debug build).
            var searchFrom = pending.count, start = 0
            pending.append(contentsOf: buffer[0..<n])
            while let newline = pending[searchFrom...].firstIndex(of: 10) {
                onLine(String(decoding: pending[start..<newline], as: UTF8.self), now)
                start = newline + 1
                searchFrom = start
            }
            pending.removeFirst(start)
        }
        if !pending.isEmpty { onLine(String(decoding: pending, as: UTF8.self), monotonicMicroseconds()) }
        close(fd)
        onEnd()
    }
    thread.name = name
    thread.stackSize = 512 << 10
    thread.start()
}
