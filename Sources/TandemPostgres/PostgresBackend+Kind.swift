import Foundation
import Tandem

extension PostgresBackend {
    /// `postgres://…` and `postgresql://…` URLs (libpq connection URIs), for ``BackendRegistry``.
    public static let kind = BackendKind(
        scheme: "postgres", usage: "postgres://USER@HOST:PORT/DB (or libpq's host=… dbname=…)",
        parse: { url, _ in parse(url) },
        open: { url in try PostgresBackend(conninfo: url.location) },
        existingIdentifier: { url in try PostgresBackend.serverID(on: PostgresConnection(url.location)) },
        opensWithoutCreating: true)

    /// Makes `postgres://` (and `postgresql://`) URLs open this backend.
    public static func register() {
        BackendRegistry.register(kind, aliases: ["postgresql"], keywordValueStrings: true)
    }

    private static func parse(_ url: String) -> BackendURL {
        BackendURL(scheme: "postgres", location: url, name: ConnectionString.redacted(ConnectionString.normalized(url)))
    }
}
