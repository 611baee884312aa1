import Foundation
import TandemCLI

Signals.catchTermination()  // first: from now on SIGINT/SIGTERM stop long-running commands cleanly
signal(SIGPIPE, SIG_IGN)
// Test hook: start at a given CLOCK_MONOTONIC microsecond, so that many processes act at one instant.
if let text = ProcessInfo.processInfo.environment["TANDEM_START_AT_US"], let startAt = Int64(text) {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let wait = startAt - (Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000)
    if wait > 0 { usleep(useconds_t(min(wait, 10_000_000))) }
}
let arguments = Array(CommandLine.arguments.dropFirst())
// Read above; from now on `ps` shows no backend password (and the command warns that one was given).
CommandLineTool.hidePasswords(arguments)
// Before anything starts Swift concurrency: what needs no database, and the descriptor check.
if let status = CommandLineTool.runImmediately(arguments) { exit(status) }
exit(await CommandLineTool.run(arguments))
