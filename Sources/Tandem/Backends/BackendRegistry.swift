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

    /// A backend kind; register it with ``BackendRegistry/register(_:)``.
    public init(scheme: String, usage: String,
                parse: @escaping @Sendable (String, String) throws -> BackendURL,
                open: @escaping @Sendable (BackendURL) throws -> any SyncBackend,
                existingIdentifier: @escaping @Sendable (BackendURL) throws -> String?) {
        self.scheme = scheme.lowercased()
        self.usage = usage
        self.parse = parse
        self.open = open
        self.existingIdentifier = existingIdentifier
    }
}

/// The backend kinds this process knows, by URL scheme. The embedded backend (`sqlite:`) is
/// always there; a backend in another module (PostgreSQL) registers itself before its URLs are used.
public enum BackendRegistry {
    private static let registered = Mutex<[String: BackendKind]>([:])

    /// Adds `kind` (replacing a kind registered before for the same scheme).
    public static func register(_ kind: BackendKind) {
        registered.withLock { $0[kind.scheme] = kind }
    }

    static func unregister(_ scheme: String) {
        registered.withLock { _ = $0.removeValue(forKey: scheme) }
    }

    /// Every kind, the embedded backend first.
    public static var kinds: [BackendKind] {
        let others = registered.withLock { $0.values.sorted { $0.scheme < $1.scheme } }
        return [EmbeddedBackend.kind] + others.filter { $0.scheme != EmbeddedBackend.kind.scheme }
    }

    /// The kind for `scheme`, or nil.
    public static func kind(for scheme: String) -> BackendKind? {
        kinds.first { $0.scheme == scheme.lowercased() }
    }
}
