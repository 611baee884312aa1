import Foundation
import Synchronization
import Testing
@testable import Tandem

/// A write transaction that writes nothing stamps nothing, the first of a process too (binding
/// a backend that is bound already, at every sync's start, is one): it wakes no live query. One
/// that changes the schema and no row stamps "any table".
@Suite struct EmptyWriteTests {
    @Test func aFirstWriteThatWritesNothingWakesNoOne() throws {
        let dir = try TemporaryDirectory()
        _ = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        for ddl in [false, true] {
            // A new instance: its writer has run no transaction yet.
            let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
            let changes = Mutex<[DatabaseChange]>([])
            let token = try db.addImmediateChangeHandler { change in changes.withLock { $0.append(change) } }
            defer { token.cancel() }
            try db.write { tx in
                _ = try tx.stored(.cursor)
                if ddl { try tx.executeOwn("CREATE TABLE plain_\(UUID().uuidString.prefix(8))(x)") }
            }
            if ddl {
                #expect(changes.withLock { $0 } == [.unknown], "a schema change of no row stamps any table")
            } else {
                #expect(changes.withLock { $0 }.isEmpty, "nothing written, nothing stamped: \(changes.withLock { $0 })")
                try db.write { _ in }
                #expect(changes.withLock { $0 }.isEmpty)
            }
        }
    }
}
