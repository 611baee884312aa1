import Foundation
import TandemCLI

Signals.catchTermination()  // first: from now on SIGINT/SIGTERM stop long-running commands cleanly
signal(SIGPIPE, SIG_IGN)
// Test and benchmark hook: many processes act at one instant.
CommandLineTool.waitForStartInstant()
let arguments = Array(CommandLine.arguments.dropFirst())
// Read above; from now on `ps` shows no backend password (and the command warns that one was given).
CommandLineTool.hidePasswords(arguments)
// Before anything starts Swift concurrency: what needs no database, and the descriptor check.
if let status = CommandLineTool.runImmediately(arguments) { exit(status) }
exit(await CommandLineTool.run(arguments))
