import Foundation
import Testing
@testable import TandemCLI

/// Each command declares its flags and options once (`Command.syntax`): its parser reads them,
/// and its usage text describes exactly them.
@Suite struct CommandSyntaxTests {
    /// The options every command takes, read before its own (`BusyTimeoutOption`, `--help`).
    static let global: Set<String> = ["busy-timeout", "help"]

    @Test func everyUsageDescribesExactlyTheOptionsItsCommandTakes() throws {
        for command in CommandLineTool.commands + CommandLineTool.testSupportCommands {
            let described = Self.optionsDescribed(in: command.usage, of: command.name).subtracting(Self.global)
            let taken = command.syntax.names.subtracting(Self.global)
            #expect(taken.subtracting(described).isEmpty, "\(command.name) takes \(taken.subtracting(described).sorted()) but its usage does not say so")
            #expect(described.subtracting(taken).isEmpty, "\(command.name)'s usage describes \(described.subtracting(taken).sorted()), which it does not take")
        }
    }

    /// The `--options` a usage text names, leaving out those it quotes from another command
    /// (`tandem init DB --schema FILE` in `check`'s): from `tandem OTHER` to the end of the
    /// quote, the sentence or the line.
    static func optionsDescribed(in usage: String, of name: String) -> Set<String> {
        var found: Set<String> = []
        for line in usage.split(separator: "\n") {
            var quoted = false, commandNext = false
            for word in line.split(separator: " ") {
                let token = word.trimmingCharacters(in: CharacterSet(charactersIn: "`'([,"))
                if token == "tandem" || token == "tandem-test-support" {
                    commandNext = true
                    continue
                }
                if commandNext {
                    quoted = token != name
                    commandNext = false
                    continue
                }
                if !quoted, let match = token.firstMatch(of: /^--([a-z][a-z0-9-]*)/) { found.insert(String(match.output.1)) }
                if word.hasSuffix("`") || word.hasSuffix("'") || word.hasSuffix(".") || word.hasSuffix(")") { quoted = false }
            }
        }
        return found
    }

    @Test func aCommandRefusesWhatItsSyntaxDoesNotDeclare() throws {
        for command in CommandLineTool.commands + CommandLineTool.testSupportCommands {
            // Every command's options are read before its own: one it declared would never reach it.
            #expect(command.syntax.names.isDisjoint(with: Self.global), "\(command.name) declares \(command.syntax.names.intersection(Self.global).sorted())")
            #expect(throws: Arguments.UsageError(message: "unknown option '--no-such-option'")) {
                try Arguments(["x", "--no-such-option"], command.syntax)
            }
            for flag in command.syntax.flags { #expect(try Arguments(["--\(flag)"], command.syntax).has(flag), "\(command.name) --\(flag)") }
        }
    }
}
