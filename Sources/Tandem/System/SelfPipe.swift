import Foundation

/// A self-pipe: a thread waiting in poll(2) watches ``readFD``; any thread wakes it with
/// ``poke()``. Both ends are non-blocking (a full pipe drops the byte: the waiter wakes
/// anyway) and not inherited by child processes.
///
/// Related documentation: https://man7.org/linux/man-pages/man2/pipe.2.html
package final class SelfPipe: Sendable {
    /// The end to poll for `POLLIN`.
    package let readFD: Int32
    private let writeFD: Int32

    /// - Throws: ``SystemError`` when the pipe cannot be made (descriptors used up).
    package init() throws {
        var fds: [Int32] = [-1, -1]
        try syscall("pipe(2)") { pipe(&fds) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        (readFD, writeFD) = (fds[0], fds[1])
    }

    deinit {
        close(readFD)
        close(writeFD)
    }

    /// Makes ``readFD`` readable.
    package func poke() {
        var one: UInt8 = 1
        _ = write(writeFD, &one, 1)
    }

    /// Takes one poke; false when there was none.
    @discardableResult
    package func take() -> Bool {
        var byte: UInt8 = 0
        return read(readFD, &byte, 1) > 0
    }

    /// Takes every poke so far.
    package func drain() {
        while take() {}
    }
}
