import Foundation

/// Signal handling for long-running commands (`watch`, `app`, `changes`, `demo`), which stop
/// cleanly with exit 0 on SIGINT or SIGTERM at any moment, even before they are ready.
///
/// `tandem`'s first statement installs a handler (``catchTermination()``) that records the signal
/// and writes a byte to a pipe (async-signal-safe). A long-running command reads that pipe on a
/// thread of its own (``onTerminate(_:)``), so a signal that came early is acted on as soon as
/// the command can stop. Every other command restores the default action
/// (``restoreTermination()``) and, if a signal already came, takes it as usual.
public enum Signals {
    nonisolated(unsafe) private static var readEnd: Int32 = -1
    nonisolated(unsafe) private static var writeEnd: Int32 = -1
    nonisolated(unsafe) private static var received: Int32 = 0

    /// Catches SIGINT and SIGTERM for the whole process from now on.
    public static func catchTermination() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        readEnd = fds[0]
        writeEnd = fds[1]
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(writeEnd, F_SETFL, O_NONBLOCK)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { number in
            Signals.received = number
            var byte: UInt8 = 1
            _ = write(Signals.writeEnd, &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
    }

    /// Restores the default action of SIGINT and SIGTERM, and takes one that already came.
    static func restoreTermination() {
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
        if received != 0 { raise(received) }
    }

    /// Runs `handler` once, on a thread of its own, when SIGINT or SIGTERM arrives (or has
    /// arrived since ``catchTermination()``).
    static func onTerminate(_ handler: @escaping @Sendable () -> Void) {
        let fd = readEnd
        let thread = Thread {
            var byte: UInt8 = 0
            while fd >= 0 && read(fd, &byte, 1) < 0 && errno == EINTR {}
            handler()
        }
        thread.name = "tandem.signals"
        thread.start()
    }
}
