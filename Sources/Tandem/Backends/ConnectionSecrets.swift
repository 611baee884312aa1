import Foundation

/// The passwords a backend URL or connection string holds, and a way to hide them in any text
/// (messages, status, log lines), whatever the spelling: a URL's user information
/// (`scheme://user:secret@host`, in any letter case, with a raw `@` or space in the password, or
/// no user name), a `password=` query parameter, or a libpq `key=value` string
/// (`host=db password='a b'`). Both the text as written and its percent-decoded form are hidden.
///
/// ```swift
/// let secrets = ConnectionSecrets("postgres://app:s3cret@db/app")
/// secrets.redact("cannot connect to postgres://app:s3cret@db/app")  // "… postgres://app:***@db/app"
/// ```
///
/// Related documentation: https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-CONNSTRING
public struct ConnectionSecrets: Sendable {
    /// What is hidden, longest first.
    public let secrets: [String]

    /// The secrets of `connection` (a URL or a `key=value` string), and `known` ones (the
    /// password a backend's own parser read from it, libpq's for PostgreSQL).
    public init(_ connection: String, known: [String] = []) {
        var found = known
        if let userInfo = ConnectionSecrets.userInfo(of: connection), let colon = userInfo.firstIndex(of: ":") {
            found.append(String(userInfo[userInfo.index(after: colon)...]))
        }
        for match in connection.matches(of: ConnectionSecrets.passwordSetting) {
            var value = String(match.output.1)
            if value.hasPrefix("'") && value.hasSuffix("'") && value.count >= 2 {
                found.append(value)
                value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\\'", with: "'")
            }
            found.append(value.replacingOccurrences(of: "\\\\", with: "\\"))
            found.append(value)
        }
        let decoded = found.compactMap { $0.removingPercentEncoding }
        secrets = Array(Set((found + decoded).filter { !$0.isEmpty })).sorted { $0.count != $1.count ? $0.count > $1.count : $0 < $1 }
    }

    /// `text` with every secret, and anything shaped like a password in a URL or a `password=`
    /// setting, replaced by `***`.
    public func redact(_ text: String) -> String {
        var result = text
        for secret in secrets { result = result.replacingOccurrences(of: secret, with: "***") }
        return ConnectionSecrets.redactShapes(result)
    }

    /// `text` with anything shaped like a password hidden, for text whose connection string is unknown.
    public static func redactShapes(_ text: String) -> String {
        var result = text.replacing(passwordSetting) { _ in "password=***" }
        result = result.replacing(urlPassword) { "\($0.1):***@" }
        return result
    }

    /// The user information of a URL (`user:password` before the host), taken up to the last
    /// `@`, so that a raw `@`, `?`, `/` or `#` in a password stays in it; an `@` in the query
    /// (after a host, a `?` and a `key=`: `…@host/db?application_name=a@b`) is not the end.
    public static func userInfo(of url: String) -> Substring? {
        guard let scheme = url.range(of: "://") else { return nil }
        let rest = url[scheme.upperBound...]
        var end = rest.lastIndex(of: "@")
        while let at = end, let question = rest[..<at].lastIndex(of: "?"), let before = rest[..<question].lastIndex(of: "@"),
            rest[rest.index(after: question)..<at].contains("=")
        {
            end = before
        }
        return end.map { rest[..<$0] }
    }

    /// `password = value`, the value quoted (`'a b'`, `\'` inside) or up to white space or `&`.
    // Each made once: a regex literal is compiled when it is evaluated, and a refusal or a
    // status line may redact many texts.
    nonisolated(unsafe) static let passwordSetting: Regex<(Substring, Substring)> = /(?i)password\s*=\s*('(?:[^'\\]|\\.)*'|(?:[^\s&\\]|\\.)+)/

    /// `scheme://user:password@`: the part before the password, then the password.
    nonisolated(unsafe) static let urlPassword: Regex<(Substring, Substring)> = /(?i)([a-z][a-z0-9+.\-]*:\/\/[^:\/?#\s]*):[^\s]*@/
}
