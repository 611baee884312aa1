import Foundation
import Tandem

/// A PostgreSQL connection string as the user wrote it, made into what libpq reads as meant, and
/// shown without its password.
///
/// libpq takes URIs (`postgres://user:password@host:port/db?…`, scheme in lower case only) and
/// `key=value` settings. A URI with a raw `@`, space, `/`, `?` or `#` in its user name or password
/// would be split elsewhere than meant (libpq would then print part of the password as a host
/// name), so those characters are percent-encoded; the scheme is lower-cased (`POSTGRES://`).
///
/// Related documentation: https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-CONNSTRING
enum ConnectionString {
    /// `text` as libpq should read it (see the type).
    static func normalized(_ text: String) -> String {
        guard let scheme = text.range(of: "://"), ["postgres", "postgresql"].contains(text[..<scheme.lowerBound].lowercased()),
            let userInfo = ConnectionSecrets.userInfo(of: text)
        else {
            if let scheme = text.range(of: "://"), ["postgres", "postgresql"].contains(text[..<scheme.lowerBound].lowercased()) {
                return text[..<scheme.lowerBound].lowercased() + text[scheme.lowerBound...]
            }
            return text
        }
        let encoded = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map { part in
            part.map { character -> String in
                switch character {
                case "@": return "%40"
                case " ": return "%20"
                case "/": return "%2F"
                case "?": return "%3F"
                case "#": return "%23"
                default: return String(character)
                }
            }.joined()
        }.joined(separator: ":")
        return text[..<scheme.lowerBound].lowercased() + "://" + encoded + text[userInfo.endIndex...]
    }

    /// `text` without its password, for names and messages.
    static func redacted(_ text: String) -> String {
        ConnectionSecrets(text).redact(text)
    }
}
