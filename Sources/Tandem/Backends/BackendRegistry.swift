import Synchronization

/// A kind of backend, found by the scheme of its URLs: how to parse them, open the backend, and
/// read its identifier without creating or changing anything.
public struct BackendKind: Sendable {
    /// The URL scheme (`sqlite`).
    public let scheme: String
    /// How URLs of this kind look, for messages (`sqlite:PATH`).
    public let usage: String
    /// Parses a whole URL of this scheme; the second argument is the directory relative paths start from.
    public let parse: @Sendable (String, String) throws -> BackendURL
    /// Opens (creating, if the kind does that) the backend a URL names.
    public let open: @Sendable (BackendURL) throws -> any SyncBackend
    /// The identifier of the backend a URL names if it exists, read without creating or
    /// changing anything; nil when there is none yet.
    public let existingIdentifier: @Sendable (BackendURL) throws -> String?
    /// Whether ``open`` creates and changes nothing (a connection to a server, where setup is a
    /// command of its own): such a backend is opened before a database's binding is checked,
    /// which then reads its identifier on the connection it opened instead of on one more
    /// (``DatabaseSync/openBackend(_:)``).
    public let opensWithoutCreating: Bool

    /// A backend kind; register it with ``BackendRegistry/register(_:aliases:keywordValueStrings:)``.
    public init(
        scheme: String, usage: String,
        parse: @escaping @Sendable (String, String) throws -> BackendURL,
        open: @escaping @Sendable (BackendURL) throws -> any SyncBackend,
        existingIdentifier: @escaping @Sendable (BackendURL) throws -> String?,
        opensWithoutCreating: Bool = false
    ) {
        self.scheme = scheme.lowercased()
        self.usage = usage
        self.parse = parse
        self.open = open
        self.existingIdentifier = existingIdentifier
        self.opensWithoutCreating = opensWithoutCreating
    }
}

/// The backend kinds this process knows, by URL scheme. The embedded backend (`sqlite:`) is
/// always there; a backend in another module (PostgreSQL) registers itself before its URLs are used.
public enum BackendRegistry {
    /// By scheme (aliases included); the embedded backend from the start.
    private static let registered = Mutex<[String: BackendKind]>([EmbeddedBackend.kind.scheme: EmbeddedBackend.kind])
    /// The kind that takes connection strings without a scheme (`host=db dbname=app`).
    private static let keywordValue = Mutex<BackendKind?>(nil)

    /// Adds `kind` for its scheme and `aliases` (`postgresql` beside `postgres`), replacing a
    /// kind registered before for the same scheme. With `keywordValueStrings`, `kind` also takes
    /// connection strings of `key=value` settings, which have no scheme (libpq's).
    public static func register(_ kind: BackendKind, aliases: [String] = [], keywordValueStrings: Bool = false) {
        registered.withLock { kinds in
            for scheme in [kind.scheme] + aliases { kinds[scheme.lowercased()] = kind }
        }
        if keywordValueStrings { keywordValue.withLock { $0 = kind } }
    }

    /// The kind that takes `key=value` connection strings, if one is registered.
    public static var keywordValueKind: BackendKind? { keywordValue.withLock { $0 } }

    static func unregister(_ scheme: String) {
        registered.withLock { _ = $0.removeValue(forKey: scheme) }
    }

    /// Every kind once (aliases not repeated), the embedded backend first.
    public static var kinds: [BackendKind] {
        registered.withLock { registered in
            registered.filter { $0.key == $0.value.scheme }.values.sorted { a, b in
                (a.scheme == EmbeddedBackend.kind.scheme ? "" : a.scheme) < (b.scheme == EmbeddedBackend.kind.scheme ? "" : b.scheme)
            }
        }
    }

    /// The kind for `scheme` (or an alias of it), or nil.
    public static func kind(for scheme: String) -> BackendKind? {
        registered.withLock { $0[scheme.lowercased()] }
    }
}
