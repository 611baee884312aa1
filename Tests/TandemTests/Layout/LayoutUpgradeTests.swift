import Foundation
import Testing
@testable import Tandem

@Suite struct LayoutUpgradeTests {
    /// Views and triggers written by an older Tandem are regenerated when a writer opens the file.
    @Test func olderViewsAndTriggersAreRegenerated() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        do {
            let db = try SharedDatabase(path: path, schema: notesSchema)
            try db.execute("INSERT INTO notes(id, title) VALUES ('kept', 'x')")
        }
        let shell = try Spawned(
            executable: "/usr/bin/sqlite3",
            [
                path,
                "DROP TRIGGER ps_view_insert__notes; UPDATE ps_kv SET value = 1 WHERE key = 'layout'",
            ])
        #expect(try shell.wait() == 0)
        let db = try SharedDatabase(path: path)
        try db.execute("INSERT INTO notes(id, title) VALUES ('new', 'y')")
        #expect(try count(db, "SELECT count(*) FROM notes") == 2)
        #expect(try count(db, "SELECT value FROM ps_kv WHERE key = 'layout'") == SchemaInstaller.layoutVersion)
    }
}
