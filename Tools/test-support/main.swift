import Foundation
import TandemCLI

// `tandem-test-support`: the commands only Tandem's tests run as real processes (holding a write
// transaction, a read-then-write counter, opening at given instants, writing with a declared
// schema, …), kept out of the `tandem` product.
Signals.catchTermination()
signal(SIGPIPE, SIG_IGN)
// Start at a given CLOCK_MONOTONIC microsecond, so that many processes act at one instant.
if let text = ProcessInfo.processInfo.environment["TANDEM_START_AT_US"], let startAt = Int64(text) {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let wait = startAt - (Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000)
    if wait > 0 { usleep(useconds_t(min(wait, 10_000_000))) }
}
let arguments = Array(CommandLine.arguments.dropFirst())
if let status = CommandLineTool.runImmediately(arguments, testSupport: true) { exit(status) }
exit(await CommandLineTool.run(arguments, testSupport: true))
