import Foundation
import Testing
@testable import Tandem

/// The pragmas that decide how Tandem's connection works are Tandem's to set: the user's SQL may
/// read them and is refused setting them, in every spelling, on a file and in memory, and the
/// database writes as before afterwards.
@Suite struct ConnectionPragmaTests {
    @Test func settingAConnectionPragmaIsRefusedReadingItIsNot() throws {
        let dir = try TemporaryDirectory()
        let file = try SharedDatabase(path: dir.path("p.db"), schema: notesSchema)
        let memory = try InMemoryDatabase(schema: notesSchema)
        let databases: [any DatabaseWriter] = [file, memory]
        for db in databases {
            for name in connectionPragmas.sorted() {
                let value = name == "journal_mode" ? "DELETE" : name == "locking_mode" ? "EXCLUSIVE" : "1"
                for spelling in ["PRAGMA \(name) = \(value)", "PRAGMA main.\(name.uppercased())=\(value)", "pragma \(name)(\(value))"] {
                    #expect(throws: TandemError.self, "\(spelling)") { try db.execute(spelling) }
                }
                // (journal_mode's query is not a read-only statement for SQLite: journalMode() reads it.)
                if name != "journal_mode" { #expect(throws: Never.self, "reading \(name)") { _ = try db.fetchAll("PRAGMA \(name)") } }
            }
            do {
                try db.execute("PRAGMA query_only = 1")
            } catch let error as TandemError {
                #expect("\(error)".contains("PRAGMA query_only") && !"\(error)".contains("ps_"), "\(error)")
            }
            try db.execute("INSERT INTO notes(id, title) VALUES ('after', 'still writes')")
            #expect(try db.fetchAll("SELECT title FROM notes WHERE id = 'after'")[0][0] == .text("still writes"))
        }
        #expect(try file.journalMode() == "wal")
        // Pragmas that are the user's own (their cache, a table's information) still run.
        try file.execute("PRAGMA cache_size = -4000")
        #expect(try file.fetchAll("PRAGMA table_info(notes)").count == 4)
    }
}
