import Foundation

/// Where `query`, `exec` and `watch` take their SQL from: the SQL argument; `-` for standard
/// input; `--file F`; or, with no SQL argument and standard input not a terminal, standard input.
enum SQLInput {
    /// The SQL, and the index of the first ARG among the positionals.
    static func resolve(_ args: Arguments) throws -> (sql: String, firstArgument: Int) {
        if let file = args.options["file"] {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw Arguments.UsageError(message: "cannot read SQL file '\(file)'")
            }
            return (try text(data, from: "'\(file)'"), 1)
        }
        if args.positionals.count >= 2 {
            if args.positionals[1] == "-" { return (try readStandardInput(), 2) }
            return (args.positionals[1], 2)
        }
        let missing = "missing SQL (give it as an argument, with --file F, or on standard input)"
        guard !StandardStreams.isTerminal(STDIN_FILENO) else { throw Arguments.UsageError(message: missing) }
        let data = StandardStreams.readInput()
        if String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw Arguments.UsageError(message: missing + "; standard input was empty")
        }
        return (try text(data, from: "standard input"), 1)
    }

    private static func readStandardInput() throws -> String {
        try text(StandardStreams.readInput(), from: "standard input")
    }

    private static func text(_ data: Data, from source: String) throws -> String {
        guard let text = String(data: data, encoding: .utf8) else {
            throw Arguments.UsageError(message: "the SQL from \(source) is not valid UTF-8")
        }
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw Arguments.UsageError(message: "the SQL from \(source) is empty")
        }
        return text
    }
}
