import Foundation
import Synchronization
import Testing
@testable import Tandem
@testable import TandemPostgres

/// Every kind of change refreshes the live queries it changes, and only those: an insert, an
/// update, a delete, an `INSERT OR REPLACE`, a delete-where, from this process, from another
/// (`tandem exec`) and by a download (`tandem sync` of another client's changes). A live query
/// on another table sees none of them.
@Suite struct LiveQueryChangeKindsTests {
    static let schema = Schema(
        tables: notesSchema.tables + [TableSchema(name: "other", columns: [.text("v")]), TableSchema(name: "drafts", columns: [.text("title")], localOnly: true)])

    @Test func everyKindOfChangeRefreshesTheQueriesItChanges() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try SharedDatabase(path: path, schema: Self.schema)
        let server = "sqlite:" + dir.path("server.db")
        let peer = try SharedDatabase(path: dir.path("b.db"), schema: Self.schema)
        try db.execute("INSERT INTO other(id, v) VALUES ('o', 'kept')")
        let notes = Mutex<[String]>([]), others = Mutex<[String]>([])
        let query = "SELECT coalesce(group_concat(id || '=' || coalesce(title, '-'), ','), '') FROM (SELECT id, title FROM notes ORDER BY id)"
        let noteQuery = try db.observe(query) { result in
            if case .success(let rows) = result { notes.withLock { $0.append(rows[0][0].stringValue ?? "") } }
        }
        let otherQuery = try db.observe("SELECT group_concat(id || '=' || v) FROM other") { result in
            if case .success(let rows) = result { others.withLock { $0.append(rows[0][0].stringValue ?? "") } }
        }
        defer { withExtendedLifetime((noteQuery, otherQuery)) {} }
        try waitUntil("the first results") { notes.withLock { $0 } == [""] && others.withLock { $0 } == ["o=kept"] }

        let here: (String) throws -> Void = { try db.execute($0) }
        let elsewhere: (String) throws -> Void = { sql in
            let result = try runTandem(["exec", path, sql])
            #expect(result.status == 0, "\(sql): \(result.stderr)")
        }
        // The sqlite3 shell under Tandem's write lock: a trigger of the user's own deletes through the view.
        let shell: (String) throws -> Void = { sql in
            let result = try runTandem(["run", path, "--", "/usr/bin/sqlite3", path, sql])
            #expect(result.status == 0, "\(sql): \(result.stderr)")
        }
        let downloaded: (String) throws -> Void = { sql in
            try peer.execute(sql)
            for client in [peer.path, path] { #expect(try runTandem(["sync", client, "--backend", server]).status == 0) }
        }
        // Start both clients from the same rows.
        for client in [path, peer.path] { #expect(try runTandem(["sync", client, "--backend", server]).status == 0) }
        let steps: [(String, (String) throws -> Void, String, String)] = [
            ("insert here", here, "INSERT INTO notes(id, title) VALUES ('a', 'one')", "a=one"),
            ("update here", here, "UPDATE notes SET title = 'two' WHERE id = 'a'", "a=two"),
            ("replace here", here, "INSERT OR REPLACE INTO notes(id, title) VALUES ('a', 'three')", "a=three"),
            ("delete here", here, "DELETE FROM notes WHERE id = 'a'", ""),
            ("insert elsewhere", elsewhere, "INSERT INTO notes(id, title) VALUES ('b', 'one'), ('c', 'one')", "b=one,c=one"),
            ("update elsewhere", elsewhere, "UPDATE notes SET title = NULL WHERE id = 'b'", "b=-,c=one"),
            ("replace elsewhere", elsewhere, "REPLACE INTO notes(id, title) VALUES ('c', 'two')", "b=-,c=two"),
            ("delete elsewhere", elsewhere, "DELETE FROM notes WHERE id = 'b'", "c=two"),
            ("delete-where elsewhere", elsewhere, "DELETE FROM notes WHERE title = 'two'", ""),
            ("insert by the shell", shell, "INSERT INTO notes(id, title) VALUES ('t', 'one')", "t=one"),
            (
                "delete through a trigger", shell,
                "CREATE TABLE IF NOT EXISTS plain(k); CREATE TRIGGER IF NOT EXISTS plain_gone AFTER DELETE ON plain BEGIN DELETE FROM notes WHERE id = OLD.k; END; INSERT INTO plain VALUES ('t'); DELETE FROM plain;",
                ""
            ),
            ("insert by a download", downloaded, "INSERT INTO notes(id, title) VALUES ('d', 'one')", "d=one"),
            ("update by a download", downloaded, "UPDATE notes SET title = 'two' WHERE id = 'd'", "d=two"),
            ("delete by a download", downloaded, "DELETE FROM notes WHERE id = 'd'", ""),
        ]
        // A local-only table queues nothing: only the row change itself says what changed, and
        // the commit names the table (no commit of an unknown kind, which would refresh every query).
        let drafts = Mutex<[String]>([])
        let seen = Mutex<[DatabaseChange]>([])
        let handler = try db.addChangeHandler { change in seen.withLock { $0.append(change) } }
        defer { withExtendedLifetime(handler) {} }
        let draftQuery = try db.observe("SELECT coalesce(group_concat(id || '=' || title, ','), '') FROM (SELECT * FROM drafts ORDER BY id)") { result in
            if case .success(let rows) = result { drafts.withLock { $0.append(rows[0][0].stringValue ?? "") } }
        }
        defer { withExtendedLifetime(draftQuery) {} }
        try waitUntil("the drafts' first result") { drafts.withLock { $0 } == [""] }
        for (what, run, sql, expected) in [
            ("a local-only insert here", here, "INSERT INTO drafts(id, title) VALUES ('d', 'one')", "d=one"),
            ("a local-only delete here", here, "DELETE FROM drafts WHERE id = 'd'", ""),
            ("a local-only insert elsewhere", elsewhere, "INSERT INTO drafts(id, title) VALUES ('e', 'one')", "e=one"),
            ("a local-only delete elsewhere", elsewhere, "DELETE FROM drafts", ""),
        ] {
            let before = drafts.withLock { $0.count }
            seen.withLock { $0 = [] }
            try run(sql)
            try waitUntil("the drafts' live query to show \(what): \(expected)") { drafts.withLock { $0.count > before && $0.last == expected } }
            try waitUntil("the commit of \(what) to be seen") { seen.withLock { $0.contains { $0.tables.contains("drafts") } } }
            #expect(seen.withLock { $0.allSatisfy { !$0.isUnknown } }, "\(what): a commit of an unknown kind")
        }
        for (what, run, sql, expected) in steps {
            let before = notes.withLock { $0.count }
            try run(sql)
            try waitUntil("the live query to show \(what): \(expected)") { notes.withLock { $0.count > before && $0.last == expected } }
            #expect(notes.withLock { $0.last } == expected, "\(what)")
        }
        #expect(others.withLock { $0 } == ["o=kept"], "no change of notes refreshed the query on other")
    }

    /// A TRUNCATE on the PostgreSQL server reaches the live query at the next sync.
    @Test(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL")) func aTruncateFromTheServerRefreshesTheQuery() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'one'), ('b', 'two')")
        #expect(try syncOnce(db, url))
        let shown = Mutex<[String]>([])
        let live = try db.observe("SELECT count(*) FROM notes") { result in
            if case .success(let rows) = result { shown.withLock { $0.append(rows[0][0].description) } }
        }
        defer { withExtendedLifetime(live) {} }
        try waitUntil("the first result") { shown.withLock { $0 } == ["2"] }
        try PostgresConnection(url).execute("TRUNCATE notes")
        #expect(try syncOnce(db, url))
        try waitUntil("the live query to show the truncate") { shown.withLock { $0.last } == "0" }
    }
}
