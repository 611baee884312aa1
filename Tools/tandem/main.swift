import Foundation
import TandemCLI

signal(SIGPIPE, SIG_IGN)
exit(await CommandLineTool.run(Array(CommandLine.arguments.dropFirst())))
