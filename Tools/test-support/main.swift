import Foundation
import TandemCLI

// `tandem-test-support`: the commands only Tandem's tests run as real processes (holding a write
// transaction, a read-then-write counter, opening at given instants, writing with a declared
// schema, …), kept out of the `tandem` product.
Signals.catchTermination()
signal(SIGPIPE, SIG_IGN)
// Test and benchmark hook: many processes act at one instant.
CommandLineTool.waitForStartInstant()
let arguments = Array(CommandLine.arguments.dropFirst())
if let status = CommandLineTool.runImmediately(arguments, testSupport: true) { exit(status) }
exit(await CommandLineTool.run(arguments, testSupport: true))
