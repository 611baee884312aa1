import Foundation

/// `sqlite:PATH` URLs: the embedded backend's kind in ``BackendRegistry``.
extension EmbeddedBackend {
    /// `sqlite:PATH` or `sqlite://PATH`; a relative PATH is taken from the given directory and
    /// kept absolute; `?busy_timeout_ms=N` sets the server file's busy timeout.
    static let kind = BackendKind(
        scheme: "sqlite", usage: "sqlite:PATH",
        parse: { url, directory in try parse(url, relativeTo: directory) },
        open: { url in
            var configuration = Configuration()
            if let ms = url.options["busy_timeout_ms"].flatMap({ Int32($0) }) { configuration.busyTimeout = .milliseconds(ms) }
            return try EmbeddedBackend(path: url.location, configuration: configuration)
        },
        existingIdentifier: { url in try identifier(ofFileAt: url.location) })

    private static func parse(_ url: String, relativeTo directory: String) throws -> BackendURL {
        var rest = String(url.drop { $0 != ":" }.dropFirst())
        if rest.hasPrefix("//") { rest = String(rest.dropFirst(2)) }
        let (path, options) = try BackendURL.splitOptions(rest, known: ["busy_timeout_ms"], in: url)
        if let text = options["busy_timeout_ms"] {
            guard let ms = Int32(text), ms >= 0 else {
                throw TandemError.invalidBackend("busy_timeout_ms takes a whole number of milliseconds, not '\(text)' in '\(url)'")
            }
        }
        guard !path.isEmpty else { throw TandemError.invalidBackend("'\(url)' names no file (use sqlite:/path/server.db)") }
        let base = URL(fileURLWithPath: directory, isDirectory: true)
        let absolute = (path.hasPrefix("/") ? URL(fileURLWithPath: path) : URL(fileURLWithPath: path, relativeTo: base)).standardizedFileURL.path
        return BackendURL(scheme: "sqlite", location: absolute, options: options, name: "sqlite:" + absolute)
    }
}
