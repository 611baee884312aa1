import Foundation
import Tandem

/// Where a command takes its backend URL from, so that a password need not be on the command
/// line, where every local user can read it (`ps`, `/proc/PID/cmdline`): the URL itself
/// (`--backend URL`, or `backend setup URL`), a file (`--backend-file FILE`: its first line), or
/// the environment (`TANDEM_BACKEND_URL`). libpq's own `PGPASSWORD` and `~/.pgpass` keep the
/// password out of the URL altogether.
enum BackendURLSource {
    /// The environment variable read when no URL is given.
    static let environmentVariable = "TANDEM_BACKEND_URL"

    /// The option that names a file holding the URL, for an option (or positional) `name`.
    static let fileOption = "backend-file"

    /// The URL `given` on the command line, else the first line of `--backend-file`, else
    /// ``environmentVariable``.
    /// - Throws: a usage error naming every way to give it when none is given, or when the file
    ///   cannot be read or is empty.
    static func url(given: String?, _ args: Arguments, missing: String) throws -> String {
        if let given { return given }
        // `--connector 'exec:PROGRAM ARGS'`: the app's own API through a connector program.
        if let connector = args.options["connector"] {
            guard connector.hasPrefix("exec:") else {
                throw Arguments.UsageError(message: "--connector takes 'exec:PROGRAM ARGS' (a connector program), not '\(connector)'")
            }
            return connector
        }
        if let file = args.options[fileOption] {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw Arguments.UsageError(message: "cannot read the backend file '\(file)'")
            }
            let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init)?
                .trimmingCharacters(in: .whitespaces)
            guard let line, !line.isEmpty else { throw Arguments.UsageError(message: "the backend file '\(file)' holds no URL") }
            return line
        }
        if let value = ProcessInfo.processInfo.environment[environmentVariable], !value.isEmpty { return value }
        throw Arguments.UsageError(message: "\(missing) (or --\(fileOption) FILE, or \(environmentVariable))")
    }

    /// The positions in a `tandem` command line (`arguments[0]` is the command) of the words
    /// that are backend URLs: the value of `--backend` (or `--backend=URL` itself) and the URL of
    /// `backend setup`, `compact`, `grant` and `revoke`.
    static func urlPositions(in arguments: [String]) -> [Int] {
        var positions: [Int] = []
        var index = 1
        var positional = 0
        let valued: Set<String> = ["--schema", "--retention", "--role", "--scope", "--" + fileOption]
        let takesURL = arguments.first == "backend" && arguments.count > 1 && ["setup", "compact", "grant", "revoke"].contains(arguments[1])
        while index < arguments.count {
            let word = arguments[index]
            if word == "--" { break }
            if word == "--backend" {
                if index + 1 < arguments.count { positions.append(index + 1) }
                index += 2
                continue
            }
            if word.hasPrefix("--backend=") {
                positions.append(index)
            } else if valued.contains(word) {
                index += 2
                continue
            } else if !word.hasPrefix("--") {
                positional += 1
                if takesURL && positional == 2 { positions.append(index) }
            }
            index += 1
        }
        return positions
    }

    /// True when a backend URL on the command line holds a password.
    static func passwordOnCommandLine(_ arguments: [String]) -> Bool {
        urlPositions(in: arguments).contains { !ConnectionSecrets(arguments[$0]).secrets.isEmpty }
    }

    /// Overwrites, with `*`, the bytes of every password in the backend URLs of this process's
    /// command line, in the memory the kernel shows as `/proc/PID/cmdline` (the argument area
    /// between `arg_start` and `arg_end` of `/proc/self/stat`), so that `ps` no longer shows
    /// them. Call it after the arguments were read (`CommandLine.arguments` is a copy).
    static func scrubPasswords(_ arguments: [String]) {
        let secrets = urlPositions(in: arguments).flatMap { ConnectionSecrets(arguments[$0]).secrets }
        guard !secrets.isEmpty, let area = argumentArea() else { return }
        let bytes = UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(bitPattern: area.start), count: area.end - area.start)
        for secret in secrets {
            let needle = Array(secret.utf8)
            guard !needle.isEmpty, needle.count <= bytes.count else { continue }
            var offset = 0
            while offset + needle.count <= bytes.count {
                if bytes[offset] == needle[0] && (0..<needle.count).allSatisfy({ bytes[offset + $0] == needle[$0] }) {
                    for k in 0..<needle.count { bytes[offset + k] = UInt8(ascii: "*") }
                    offset += needle.count
                } else {
                    offset += 1
                }
            }
        }
    }

    /// `arg_start` and `arg_end` of this process (fields 48 and 49 of `/proc/self/stat`).
    private static func argumentArea() -> (start: Int, end: Int)? {
        guard let data = FileManager.default.contents(atPath: "/proc/self/stat"),
            let text = String(data: data, encoding: .utf8), let close = text.lastIndex(of: ")")
        else { return nil }
        // Fields after the command name start at field 3.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 46, let start = Int(fields[45]), let end = Int(fields[46]), start > 0, end > start else { return nil }
        return (start, end)
    }
}
