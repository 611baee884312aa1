import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

@Suite struct ConflictRuleTests {
    /// update racing a delete: the delete wins, whichever reaches the backend first; no client
    /// ever holds a row made of one client's column and NULLs, and all converge.
    @Test(arguments: [true, false])
    func aDeleteWinsOverAConcurrentUpdate(deleteFirst: Bool) throws {
        let f = try SyncFixture()
        try f.a.execute("INSERT INTO notes(id, title, done, score) VALUES ('r', 'first', 0, 1.5)")
        for db in [f.a, f.b, f.a] { #expect(try syncOnce(db, f.backendURL)) }
        #expect(try count(f.b, "SELECT count(*) FROM notes WHERE id = 'r'") == 1)
        #expect(try runTandem(["exec", f.a.path, "DELETE FROM notes WHERE id = 'r'"]).status == 0)
        #expect(try runTandem(["exec", f.b.path, "UPDATE notes SET title = 'edited offline' WHERE id = 'r'"]).status == 0)
        let order = deleteFirst ? [f.a, f.b, f.a] : [f.b, f.a, f.b]
        for db in order { #expect(try syncOnce(db, f.backendURL)) }
        for db in [f.a, f.b] {
            #expect(try count(db, "SELECT count(*) FROM notes WHERE id = 'r'") == 0, "\(db.path)")
        }
        #expect(try f.serverRows().isEmpty)
    }
}
