import Foundation

/// A parsed backend URL: its scheme, what the backend kind registered for that scheme made of
/// the rest, and the name a client database records.
///
/// - `sqlite:PATH` (or `sqlite://PATH`): the embedded backend, a server database file. A
///   relative PATH is taken from the current directory and kept as an absolute path.
///   `?busy_timeout_ms=N` sets the server file's busy timeout (default 5000 ms).
///
/// Other schemes come from backend kinds registered with ``BackendRegistry/register(_:aliases:keywordValueStrings:)``.
public struct BackendURL: Sendable, Equatable {
    /// The scheme, lowercased (`sqlite`).
    public let scheme: String
    /// What the scheme addresses: an absolute path for `sqlite:`, a connection string for a server.
    public let location: String
    /// Options from the query part, validated by the backend kind.
    public let options: [String: String]
    /// The backend as a client database records it and as messages show it: scheme and
    /// location, no options, never a password.
    public let name: String

    /// A URL as a backend kind's parser makes it.
    public init(scheme: String, location: String, options: [String: String] = [:], name: String) {
        self.scheme = scheme
        self.location = location
        self.options = options
        self.name = name
    }

    /// Parses `url`; a relative path is resolved against the current directory.
    /// - Throws: ``TandemError/invalidBackend(_:)`` for an unknown scheme, or what the scheme's parser throws.
    public init(_ url: String) throws {
        try self.init(url, relativeTo: FileManager.default.currentDirectoryPath)
    }

    /// Parses `url`; a relative path is resolved against `directory`.
    /// - Throws: ``TandemError/invalidBackend(_:)`` for an unknown scheme, or what the scheme's parser throws.
    public init(_ url: String, relativeTo directory: String) throws {
        // Said only in a refusal: the names of the schemes, and the URL with its secrets hidden.
        func supported() -> String { BackendRegistry.kinds.map(\.usage).joined(separator: ", ") }
        func shown() -> String { ConnectionSecrets(url).redact(url) }
        if BackendURL.isKeywordValueString(url) {
            guard let kind = BackendRegistry.keywordValueKind else {
                throw TandemError.invalidBackend("'\(shown())' is a key=value connection string, which no registered backend takes (use \(supported()))")
            }
            self = try kind.parse(url, directory)
            return
        }
        guard let colon = url.firstIndex(of: ":") else {
            throw TandemError.invalidBackend("'\(shown())' is not a backend URL (use \(supported()))")
        }
        let scheme = url[..<colon].lowercased()
        guard let kind = BackendRegistry.kind(for: scheme) else {
            throw TandemError.invalidBackend(
                "unknown backend scheme '\(ConnectionSecrets(url).redact(String(url[..<colon])))' in '\(shown())' (supported: \(supported()))")
        }
        self = try kind.parse(url, directory)
    }

    /// True when `text` starts as a `key=value` connection string does: optional white space
    /// (Unicode's White_Space), a keyword (an ASCII letter or `_`, then ASCII letters, digits or
    /// `_`), optional white space, `=`.
    static func isKeywordValueString(_ text: String) -> Bool {
        func isKeyword(_ scalar: Unicode.Scalar, first: Bool) -> Bool {
            scalar.isASCII && (("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar) || scalar == "_" || (!first && ("0"..."9").contains(scalar)))
        }
        var rest = text.unicodeScalars.drop { $0.properties.isWhitespace }
        guard let first = rest.first, isKeyword(first, first: true) else { return false }
        rest = rest.drop { isKeyword($0, first: false) }.drop { $0.properties.isWhitespace }
        return rest.first == "="
    }

    /// Splits `rest` at `?` into the part before it and its `key=value` options.
    /// - Throws: ``TandemError/invalidBackend(_:)`` naming an option that is not in `known`.
    public static func splitOptions(_ rest: String, known: Set<String>, in url: String) throws -> (String, [String: String]) {
        guard let question = rest.firstIndex(of: "?") else { return (rest, [:]) }
        var options: [String: String] = [:]
        for item in rest[rest.index(after: question)...].split(separator: "&") {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard known.contains(pair[0]) else {
                throw TandemError.invalidBackend("unknown option '\(pair[0])' in '\(url)' (supported: \(known.sorted().map { "\($0)=…" }.joined(separator: ", ")))")
            }
            options[pair[0]] = pair.count == 2 ? pair[1] : ""
        }
        return (String(rest[..<question]), options)
    }
}

/// Opens a backend from a URL (see ``BackendURL``); a relative path is taken from the current directory.
/// - Throws: ``TandemError/invalidBackend(_:)`` for an unknown scheme, a bad option or a missing directory.
public func openBackend(url: String) throws -> any SyncBackend {
    try openBackend(BackendURL(url))
}

/// Opens the backend `url` names, through the kind registered for its scheme.
/// - Throws: ``TandemError/invalidBackend(_:)`` and what the backend kind throws when opening.
public func openBackend(_ url: BackendURL) throws -> any SyncBackend {
    guard let kind = BackendRegistry.kind(for: url.scheme) else {
        throw TandemError.invalidBackend("unknown backend scheme '\(url.scheme)'")
    }
    return try kind.open(url)
}
