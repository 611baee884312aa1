import Foundation
import Synchronization
import Testing
@testable import Tandem

/// A database syncs with one backend. A backend whose opening creates nothing (a server
/// connection) is opened before the binding is checked, and checked by the identifier it read
/// on opening, not on a connection of its own.
extension BackendKindsTests {
    @Suite(.serialized) struct BackendBindingTests {
        /// Servers of a test backend kind by location (no server at "missing"; those in `down`
        /// cannot be reached), and how many times each of the kind's two ways in was taken.
        private final class Servers: Sendable {
            let backends = Mutex<[String: MemoryBackend]>(["one": MemoryBackend(), "two": MemoryBackend()])
            let down = Mutex<Set<String>>([])
            let calls = Mutex((opened: 0, identifiersRead: 0))

            func register() {
                BackendRegistry.register(
                    BackendKind(
                        scheme: "connecting", usage: "connecting:NAME",
                        parse: { url, _ in BackendURL(scheme: "connecting", location: String(url.dropFirst("connecting:".count)), name: url) },
                        open: { [self] url in
                            calls.withLock { $0.opened += 1 }
                            guard !down.withLock({ $0.contains(url.location) }) else { throw TandemError.invalidBackend("\(url.name) cannot be reached") }
                            guard let backend = backends.withLock({ $0[url.location] }) else { throw TandemError.invalidBackend("\(url.name) is not set up") }
                            return backend
                        },
                        existingIdentifier: { [self] url in
                            calls.withLock { $0.identifiersRead += 1 }
                            guard !down.withLock({ $0.contains(url.location) }) else { throw TandemError.invalidBackend("\(url.name) cannot be reached") }
                            return backends.withLock { $0[url.location]?.identifier }
                        },
                        opensWithoutCreating: true))
            }
        }

        @Test func aServerIsOpenedOnceAndCheckedByTheIdentifierItRead() throws {
            let servers = Servers()
            servers.register()
            defer { BackendRegistry.unregister("connecting") }
            let dir = try TemporaryDirectory()
            let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
            let one = try BackendURL("connecting:one")
            try db.bind(to: try db.sync.openBackend(one), name: one.name)
            #expect(servers.calls.withLock { $0 } == (1, 0), "a database that syncs with none yet opens the server once")
            _ = try db.sync.openBackend(one)
            #expect(servers.calls.withLock { $0 } == (2, 0), "the server it syncs with: opened once, its identifier not read again")
            #expect(throws: TandemError.invalidBackend(refusal(db.path, to: "connecting:two", detail: ""))) {
                try db.sync.openBackend(try BackendURL("connecting:two"))
            }
            #expect(servers.calls.withLock { $0 } == (3, 0))
            // A server that cannot be opened is refused, as before opening, when it is not the one
            // (a server that is not set up); one that cannot be reached says so.
            #expect(throws: TandemError.invalidBackend(refusal(db.path, to: "connecting:missing", detail: ", which does not exist (nothing was created)"))) {
                try db.sync.openBackend(try BackendURL("connecting:missing"))
            }
            #expect(servers.calls.withLock { $0 } == (4, 1))
            servers.down.withLock { $0 = ["one"] }
            #expect(throws: TandemError.invalidBackend("connecting:one cannot be reached")) { try db.sync.openBackend(one) }
            #expect(servers.calls.withLock { $0 } == (5, 2))
        }

        private func refusal(_ path: String, to name: String, detail: String) -> String {
            "'\(path)' syncs with another backend (connecting:one) and cannot switch to '\(name)'\(detail): its download cursor and uploaded transaction ids belong to the first; sync a new client database instead"
        }
    }
}
