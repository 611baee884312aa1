import Foundation
import Testing
@testable import Tandem

/// Backend URLs, parsed without opening anything.
@Suite(.serialized) struct BackendURLTests {
    @Test func sqliteURLsResolveToAbsolutePathsWithOptions() throws {
        let url = try BackendURL("sqlite:data/server.db?busy_timeout_ms=200", relativeTo: "/srv/app")
        #expect(url.scheme == "sqlite")
        #expect(url.location == "/srv/app/data/server.db")
        #expect(url.options == ["busy_timeout_ms": "200"])
        #expect(url.name == "sqlite:/srv/app/data/server.db")
        #expect(try BackendURL("sqlite:///abs/s.db", relativeTo: "/x").location == "/abs/s.db")
        #expect(try BackendURL("SQLITE:../s.db", relativeTo: "/a/b").location == "/a/s.db")
    }

    @Test func badURLsSayWhatIsWrong() {
        #expect(throws: TandemError.invalidBackend("'server.db' is not a backend URL (use sqlite:PATH)")) { try BackendURL("server.db") }
        #expect(throws: TandemError.invalidBackend("unknown backend scheme 'ftp' in 'ftp://x' (supported: sqlite:PATH)")) { try BackendURL("ftp://x") }
        #expect(throws: TandemError.invalidBackend("'sqlite:' names no file (use sqlite:/path/server.db)")) { try BackendURL("sqlite:") }
        #expect(throws: TandemError.invalidBackend("unknown option 'timeout' in 'sqlite:s.db?timeout=1' (supported: busy_timeout_ms=…)")) {
            try BackendURL("sqlite:s.db?timeout=1")
        }
        #expect(throws: TandemError.invalidBackend("busy_timeout_ms takes a whole number of milliseconds, not '-1' in 'sqlite:s.db?busy_timeout_ms=-1'")) {
            try BackendURL("sqlite:s.db?busy_timeout_ms=-1")
        }
    }

    @Test func registeredKindsAreFoundByScheme() throws {
        BackendRegistry.register(
            BackendKind(
                scheme: "memory", usage: "memory:NAME",
                parse: { url, _ in BackendURL(scheme: "memory", location: String(url.dropFirst("memory:".count)), name: url) },
                open: { _ in throw TandemError.invalidBackend("not for opening") },
                existingIdentifier: { _ in nil }))
        defer { BackendRegistry.unregister("memory") }
        let url = try BackendURL("memory:one")
        #expect(url.location == "one" && url.name == "memory:one")
        #expect(BackendRegistry.kinds.first?.scheme == "sqlite")
        #expect(throws: TandemError.invalidBackend("not for opening")) { try openBackend(url) }
        BackendRegistry.register(BackendRegistry.kind(for: "memory")!, aliases: ["mem"])
        defer { BackendRegistry.unregister("mem") }
        #expect(BackendRegistry.kind(for: "MEM")?.scheme == "memory", "an alias, in any case, finds its kind")
        #expect(BackendRegistry.kinds.filter { $0.scheme == "memory" }.count == 1, "an alias is not listed again")
    }
}
