import CLibPQ
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
        guard let scheme = text.range(of: "://"), ["postgres", "postgresql"].contains(text[..<scheme.lowerBound].lowercased()) else { return text }
        let lowered = text[..<scheme.lowerBound].lowercased()
        guard let userInfo = ConnectionSecrets.userInfo(of: text) else { return lowered + text[scheme.lowerBound...] }
        // The user name and password percent-encoded as RFC 3986 allows them (`%` kept: an
        // escape the user wrote stays one).
        let encoded = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map { part in
            String(part).addingPercentEncoding(withAllowedCharacters: Self.userInfoAllowed) ?? String(part)
        }.joined(separator: ":")
        return lowered + "://" + encoded + text[userInfo.endIndex...]
    }

    private static let userInfoAllowed = CharacterSet.urlPasswordAllowed.union(CharacterSet(charactersIn: "%"))

    /// The password `text` gives, as libpq reads it (`PQconninfoParse`: a URI's user
    /// information or `password` parameter, a `key=value` string's `password` in any quoting),
    /// or nil when it gives none, libpq cannot read it, or libpq cannot be loaded.
    static func password(of text: String) -> String? {
        guard tandem_libpq_error() == nil, tandem_libpq_missing_function() == nil else { return nil }
        var error: UnsafeMutablePointer<CChar>?
        guard let options = tandem_PQconninfoParse(text, &error) else {
            if let error { tandem_PQfreemem(error) }
            return nil
        }
        defer { tandem_PQconninfoFree(options) }
        var option = options
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == "password", let value = option.pointee.val { return String(cString: value) }
            option += 1
        }
        return nil
    }

    /// The secrets of `text`: what ``Tandem/ConnectionSecrets`` finds, and the password libpq reads.
    static func secrets(of text: String) -> ConnectionSecrets {
        ConnectionSecrets(text, known: password(of: text).map { [$0] } ?? [])
    }

    /// `text` without its password, for names and messages.
    static func redacted(_ text: String) -> String {
        secrets(of: text).redact(text)
    }
}
