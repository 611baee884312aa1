import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI
import TandemPostgres

/// The suites that change the process's backend kinds (``BackendRegistry``), one at a time: a
/// kind one registers for a while must not show in the kinds another lists.
@Suite(.serialized) enum BackendKindsTests {}

/// Backend URLs, parsed without opening anything.
extension BackendKindsTests {
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

        /// The kinds listed are those `tandem` registers (commands run inside this process register
        /// them for the whole process, as `tandem` does).
        @Test func badURLsSayWhatIsWrong() {
            PostgresBackend.register()
            BackendRegistry.register(ExecConnector.kind)
            let kinds = "sqlite:PATH, exec:PROGRAM ARGS, postgres://USER@HOST:PORT/DB (or libpq's host=… dbname=…)"
            #expect(throws: TandemError.invalidBackend("'server.db' is not a backend URL (use \(kinds))")) { try BackendURL("server.db") }
            #expect(throws: TandemError.invalidBackend("unknown backend scheme 'ftp' in 'ftp://x' (supported: \(kinds))")) { try BackendURL("ftp://x") }
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

        /// The scan that tells a `key=value` connection string from a URL, against the rule written
        /// as a regular expression (ICU's `\s` is Unicode's White_Space), on generated texts.
        @Test func keywordValueStringsAreToldApartAsTheRegexWould() {
            let pieces = [
                " ", "\t", "\n", "\u{0B}", "\u{A0}", "\u{2003}", "\u{3000}", "\u{85}", "=", ":", "/", "_", "a", "Z", "q", "0", "9", "é",
                "ﬁ", "host", "user", "password", "sqlite:", "postgres://", "?", "@", "'", "-", "\u{0}",
            ]
            var generator = SystemRandomNumberGenerator()
            var texts = ["", " ", "=", "a=", " a = b", "_=", "1a=", "a1=x", "sqlite:s.db", "host=db port=5", "\u{A0}host=db", "hé=1", "a b=1"]
            for _ in 0..<5_000 {
                let count = Int.random(in: 1...6, using: &generator)
                texts.append((0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined())
            }
            for text in texts {
                let expected = text.range(of: #"^\s*[A-Za-z_][A-Za-z0-9_]*\s*="#, options: .regularExpression) != nil
                #expect(BackendURL.isKeywordValueString(text) == expected, "\(text.debugDescription)")
            }
        }
    }
}
