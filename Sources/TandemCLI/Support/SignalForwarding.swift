import Foundation
import Synchronization

/// `tandem run`'s signals: while its command runs, SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to
/// `tandem` go to the command, and `tandem` waits for it (holding the write lock) instead of
/// dying and releasing the lock under a command that goes on writing.
///
/// A signal the terminal sent (Ctrl-C: `si_code` is `SI_KERNEL`) went to the command's process
/// group too, so it is not sent again; nor is one the command sent itself. A signal that comes
/// before the command started is sent to it as soon as it has.
enum SignalForwarding {
    private static let child = Atomic<Int32>(0)
    private static let pending = Atomic<Int32>(0)
    static let forwarded: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// Catches the signals from now on (before the command is spawned).
    static func begin() {
        // Initialised here, not first in the handler (a lazy global's initialiser is not
        // async-signal-safe).
        child.store(0, ordering: .sequentiallyConsistent)
        pending.store(0, ordering: .sequentiallyConsistent)
        var action = sigaction()
        action.__sigaction_handler.sa_sigaction = { number, info, _ in
            if let info, info.pointee.si_code == Int32(SI_KERNEL) { return }
            let running = SignalForwarding.child.load(ordering: .sequentiallyConsistent)
            if let info, running != 0, info.pointee._sifields._kill.si_pid == running { return }
            // Stored before the command's pid is read again: whichever of this and forward(to:)
            // comes second sends it.
            SignalForwarding.pending.store(number, ordering: .sequentiallyConsistent)
            if SignalForwarding.child.load(ordering: .sequentiallyConsistent) != 0 { SignalForwarding.send() }
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_SIGINFO | SA_RESTART
        for number in forwarded { sigaction(number, &action, nil) }
    }

    /// The command runs as `pid`: signals go to it from now on, one that came already at once.
    static func forward(to pid: pid_t) {
        child.store(pid, ordering: .sequentiallyConsistent)
        send()
    }

    /// Sends the pending signal, exactly once whoever calls (the handler or ``forward(to:)``).
    private static func send() {
        let number = pending.exchange(0, ordering: .sequentiallyConsistent)
        let target = child.load(ordering: .sequentiallyConsistent)
        if number != 0 && target != 0 { kill(target, number) }
    }

    /// The command has exited (and is not reaped yet, so its pid cannot name another process):
    /// signals are kept from now on.
    static func stopForwarding() {
        child.store(0, ordering: .sequentiallyConsistent)
    }

    /// The write lock is released: the default actions again, and a signal kept since the
    /// command exited (or that came when it could not start) is taken now.
    static func end() {
        child.store(0, ordering: .sequentiallyConsistent)
        for number in forwarded { signal(number, SIG_DFL) }
        let number = pending.exchange(0, ordering: .sequentiallyConsistent)
        if number != 0 { raise(number) }
    }
}
