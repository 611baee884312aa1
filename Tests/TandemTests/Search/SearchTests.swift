import Foundation
import Synchronization
import Testing
@testable import Tandem

/// A note with a searched title and body.
struct SearchedNote: Record, Equatable {
    var id = ""
    var title: String
    var body: String?
    var pinned = false
    static let tableName = "searched_notes"
}

let searchSchema = Schema(tables: [
    TableSchema(
        name: "searched_notes", columns: [.text("title"), .text("body"), .integer("pinned")],
        search: SearchIndex(columns: ["title", "body"])),
    TableSchema(name: "local_words", columns: [.text("word")], localOnly: true, search: SearchIndex(columns: ["word"], tokenizer: .trigram)),
    TableSchema(name: "stemmed", columns: [.text("text")], search: SearchIndex(columns: ["text"], tokenizer: .porter)),
])

/// Full-text search (``SearchIndex``): declared in the schema, kept by every write path in the
/// write's transaction, searched by words or FTS5 syntax, refused clearly when a query is wrong.
@Suite struct SearchTests {
    /// The ids a search of `table` finds, sorted.
    func found(_ db: SharedDatabase, _ query: String, in table: String = "searched_notes", syntax: SearchSyntax = .words) throws -> [String] {
        try db.search(table, matching: query, syntax: syntax).compactMap { $0["id"]?.stringValue }.sorted()
    }

    /// Rows whose index entry differs from their text (``TableSchema/searchDriftCount``).
    func drift(_ db: SharedDatabase, _ table: String = "searched_notes") throws -> Int64 {
        try db.read { tx in
            let declared = try #require(try SchemaInstaller.storedSchema(tx)?.table(named: table))
            return try tx.scalar(declared.searchDriftCount).int64Value ?? -1
        }
    }

    @Test func everyWritePathKeepsTheIndex() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: searchSchema)
        // SQL through the view.
        try db.execute("INSERT INTO searched_notes(id, title, body) VALUES ('sql', 'Buy milk', 'and bread')")
        #expect(try found(db, "milk") == ["sql"])
        try db.execute("UPDATE searched_notes SET title = 'Buy butter' WHERE id = 'sql'")
        #expect(try found(db, "milk").isEmpty && found(db, "butter") == ["sql"])
        try db.execute("UPDATE searched_notes SET pinned = 1 WHERE id = 'sql'")  // not searched: the entry stays
        #expect(try found(db, "bread") == ["sql"])
        // Records.
        var note = try db.insert(SearchedNote(id: "rec", title: "Crème brûlée", body: nil))
        #expect(try found(db, "creme") == ["rec"], "diacritics removed")
        note.body = "with milk"
        try db.update(note)
        #expect(try found(db, "milk") == ["rec"])
        // An import.
        _ = try db.importJSON(Data(#"[{"id":"imp","title":"Imported milk","body":null}]"#.utf8), into: "searched_notes")
        #expect(try found(db, "milk") == ["imp", "rec"])
        // The sqlite3 shell, another process with no Tandem in it.
        let shell = try Spawned(
            executable: "/usr/bin/sqlite3",
            [db.path, "INSERT INTO searched_notes(id, title) VALUES ('shell', 'milk from the shell'); DELETE FROM searched_notes WHERE id = 'imp';"])
        #expect(try shell.wait() == 0)
        #expect(try found(db, "milk") == ["rec", "shell"])
        try db.execute("DELETE FROM searched_notes WHERE id = 'rec'")
        #expect(try found(db, "milk") == ["shell"])
        #expect(try drift(db) == 0)
    }

    @Test func downloadsKeepTheIndex() throws {
        let dir = try TemporaryDirectory()
        let server = try EmbeddedBackend(path: dir.path("server.db"))
        let a = try SharedDatabase(path: dir.path("a.db"), schema: searchSchema)
        let b = try SharedDatabase(path: dir.path("b.db"), schema: searchSchema)
        try b.execute("INSERT INTO searched_notes(id, title) VALUES ('n1', 'milk from b'), ('n2', 'bread from b')")
        _ = try b.sync.once(with: server)
        _ = try a.sync.once(with: server)
        #expect(try found(a, "milk") == ["n1"])
        try b.execute("UPDATE searched_notes SET title = 'oat milk' WHERE id = 'n2'")
        try b.execute("DELETE FROM searched_notes WHERE id = 'n1'")
        _ = try b.sync.once(with: server)
        _ = try a.sync.once(with: server)
        #expect(try found(a, "milk") == ["n2"])
        #expect(try drift(a) == 0)
    }

    @Test func tokenizersMatchAsDeclared() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: searchSchema)
        try db.execute("INSERT INTO local_words(id, word) VALUES ('w', 'Milkshake')")
        #expect(try found(db, "lks", in: "local_words") == ["w"], "trigram: a substring")
        try db.execute("INSERT INTO stemmed(id, text) VALUES ('s', 'running fast')")
        #expect(try found(db, "run", in: "stemmed") == ["s"], "porter: a stem")
        #expect(try found(db, "run").isEmpty)
    }

    @Test func aTypedSearchRanksFiltersAndSnippets() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: searchSchema)
        try db.insert(contentsOf: [
            SearchedNote(id: "a", title: "milk", body: "milk and more milk", pinned: true),
            SearchedNote(id: "b", title: "bread", body: "a little milk", pinned: false),
            SearchedNote(id: "c", title: "tea", body: nil, pinned: true),
        ])
        let all = try db.search(SearchedNote.self, matching: "milk", snippetOf: "body")
        #expect(all.map(\.record.id) == ["a", "b"], "best first")
        #expect(all[0].rank <= all[1].rank)
        #expect(all[1].snippet == "a little [milk]")
        try db.execute("INSERT INTO searched_notes(id, title, body, pinned) VALUES ('nul', 'x', 'first' || char(0) || 'second third fourth', 0)")
        #expect(
            try db.search(SearchedNote.self, matching: "fourth", snippetOf: "body").first?.snippet == "first second third [fourth]",
            "a NUL is a space in the index and its snippets")
        #expect(try db.search(SearchedNote.self, matching: "fourth").first?.record.body == "first\u{0}second third fourth", "the record as stored")
        let pinned = try db.search(SearchedNote.self, matching: "milk", where: #Predicate { $0.pinned }, limit: 5)
        #expect(pinned.map(\.record.id) == ["a"])
        let byTitle = try db.search(SearchedNote.self, matching: "milk", sortBy: [SortDescriptor(\.title)], limit: 1)
        #expect(byTitle.map(\.record.id) == ["b"], "bread before milk, then the limit")
        #expect(try db.search("searched_notes", matching: "milk", where: "pinned = ?", [0]).map { $0["id"]?.stringValue } == ["b"])
    }

    /// Bad queries in FTS5 syntax are refused naming the character; plain words search any text.
    @Test func aBadQueryIsRefusedNamingWhere() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: searchSchema)
        try db.execute("INSERT INTO searched_notes(id, title) VALUES ('q', 'say \"hi\" (or not) OR milk')")
        let refused: [(String, Int?, String)] = [
            (#"milk "bread"#, 6, "not closed"),
            ("NOT milk", 1, "needs a phrase before it"),
            ("milk OR", 6, "needs a phrase after it"),
            ("(milk", 1, "not closed"),
            ("milk)", 5, "closes no"),
            ("nope:milk", 1, "not a searched column"),
            ("{title nope}: milk", 8, "not a searched column"),
            ("milk\u{0}bread", 5, "control character"),
            ("milk\u{7}", 5, "control character"),
            ("milk; DROP", 5, "not part of FTS5's syntax"),
            ("", nil, "no words"),
            ("   ", nil, "no words"),
            (String(repeating: "milk ", count: 20_000), nil, "at most 65536"),
        ]
        for (query, position, reason) in refused {
            do {
                _ = try db.search("searched_notes", matching: query, syntax: .fts5)
                Issue.record("accepted: \(query.prefix(40))")
            } catch TandemError.invalidSearchQuery(let at, let why) {
                #expect(at == position && why.contains(reason), "\(query.prefix(40)): \(at.map(String.init) ?? "-") \(why)")
            }
        }
        // The same text as words: found, or nothing, never an error.
        for (query, _, _) in refused where !query.trimmingCharacters(in: .whitespaces).isEmpty && query.utf8.count < 1000 {
            #expect(throws: Never.self) { _ = try db.search("searched_notes", matching: query) }
        }
        #expect(try found(db, #""hi" (or"#) == ["q"], "quotes and parentheses are words")
        #expect(try found(db, "title:milk OR title:hi", syntax: .fts5) == ["q"])
        #expect(try found(db, "mil*", syntax: .fts5) == ["q"])
        #expect(throws: TandemError.self) { try db.search("nope", matching: "milk") }
        #expect(throws: TandemError.self) { try db.search("searched_notes", matching: "milk", snippetOf: "pinned") }
    }

    /// A live search follows another process's commits, and emits only when its rows change.
    @Test func aLiveSearchFollowsAnotherProcess() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: searchSchema)
        let seen = Mutex<[[String]]>([])
        let token = try db.observeSearch("searched_notes", matching: "milk") { result in
            if case .success(let rows) = result { seen.withLock { $0.append(rows.compactMap { $0["id"]?.stringValue }) } }
        }
        defer { token.cancel() }
        try waitUntil("the first result") { seen.withLock { $0 } == [[]] }
        #expect(try tandem(["exec", db.path, "INSERT INTO searched_notes(id, title) VALUES ('p', 'milk from a process')"]).status == 0)
        try waitUntil("the other process's row") { seen.withLock { $0.last } == ["p"] }
        #expect(try tandem(["exec", db.path, "INSERT INTO searched_notes(id, title) VALUES ('q', 'tea')"]).status == 0)
        #expect(try tandem(["exec", db.path, "UPDATE searched_notes SET title = 'milk tea' WHERE id = 'q'"]).status == 0)
        try waitUntil("the updated row") { seen.withLock { $0.last?.sorted() } == ["p", "q"] }
        #expect(seen.withLock { $0 }.count == 3, "the tea row alone changed no result: \(seen.withLock { $0 })")
    }

    /// A typed live search: records with their snippets, again only when they change.
    @Test func aTypedLiveSearchFollowsAnotherProcess() async throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: searchSchema)
        var updates = db.watchSearch(SearchedNote.self, matching: "milk", where: #Predicate { !$0.pinned }, snippetOf: "title").makeAsyncIterator()
        #expect(try await updates.next()?.isEmpty == true)
        #expect(try tandem(["exec", db.path, "INSERT INTO searched_notes(id, title, pinned) VALUES ('p', 'pinned milk', 1), ('t', 'tea', 0)"]).status == 0)
        #expect(try tandem(["exec", db.path, "INSERT INTO searched_notes(id, title, pinned) VALUES ('m', 'oat milk', 0)"]).status == 0)
        let next = try #require(try await updates.next())
        #expect(next.map(\.record.id) == ["m"] && next.first?.snippet == "oat [milk]", "the pinned row and the tea row showed nothing new: \(next.map(\.record.id))")
    }

    /// Tables whose names end as FTS5 names its own tables (`notes_data`, `notes_idx`, …) beside
    /// `notes`, in either order: each index is its own.
    @Test func indexesOfTablesNamedAlikeStayApart() throws {
        for names in [["notes", "notes_data", "notes_idx"], ["notes_content", "notes_config", "notes"]] {
            let dir = try TemporaryDirectory()
            let tables = names.map { TableSchema(name: $0, columns: [.text("t")], search: SearchIndex(columns: ["t"])) }
            let db = try SharedDatabase(path: dir.path("a.db"), schema: Schema(tables: [tables[0]]))
            try db.execute("INSERT INTO \(names[0])(id, t) VALUES ('first', 'milk')")
            let grown = try SharedDatabase(path: dir.path("a.db"), schema: Schema(tables: tables))
            for name in names { try grown.execute("INSERT INTO \(name)(id, t) VALUES ('of-\(name)', 'milk')") }
            for name in names {
                let ids = try grown.search(name, matching: "milk").compactMap { $0["id"]?.stringValue }.sorted()
                #expect(ids == (name == names[0] ? ["first", "of-\(name)"] : ["of-\(name)"]), "\(names): \(name) \(ids)")
            }
            #expect(try grown.checkLayout().isEmpty)
        }
    }

    /// SQL cannot write FTS5's own tables (the connection is defensive), and what FTS5 refuses
    /// after the check is refused in the user's terms too.
    @Test func theIndexsOwnTablesAreFTS5sAlone() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: searchSchema)
        try db.execute("INSERT INTO searched_notes(id, title) VALUES ('a', 'milk')")
        for suffix in ["data", "idx", "content", "docsize", "config"] {
            #expect(throws: (any Error).self) { try db.execute("DELETE FROM ps_search__searched_notes__fts_\(suffix)") }
        }
        #expect(try found(db, "milk") == ["a"])
        for query in ["-milk", "milk - bread", "NEAR(milk bread, abc)", "NEAR(milk, bread)", "milk, bread", "(milk)*", "milk\u{0B}bread"] {
            do {
                _ = try db.search("searched_notes", matching: query, syntax: .fts5)
            } catch TandemError.invalidSearchQuery(_, let reason) {
                #expect(!reason.contains("fts5") && !reason.contains("ps_"), "\(query): \(reason)")
            } catch {
                Issue.record("\(query): \(error)")
            }
        }
        #expect(try found(db, "milk\u{A0}OR tea", syntax: .fts5).isEmpty, "a no-break space is part of a word, as FTS5 reads it")
        do {
            _ = try db.search("searched_notes", matching: "milk", where: "nope = 1")
            Issue.record("a filter of an unknown column ran")
        } catch {
            #expect("\(error)".contains("no such column: nope") && !"\(error)".contains("ps_"), "said over the user's table: \(error)")
        }
    }

    /// A filter is one condition: it cannot close the search's parenthesis to read another table
    /// or drop the limit.
    @Test func aFilterIsOneCondition() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: searchSchema)
        try db.execute("INSERT INTO searched_notes(id, title, pinned) VALUES ('a', 'milk (x)', 0), ('b', 'milk', 1)")
        for filter in ["1) UNION SELECT key, value, 1, 1, 1, 1 FROM ps_kv --", "pinned = 0); DROP TABLE x", "pinned = 0 -- x", "(pinned = 0", "title = 'milk"] {
            #expect(throws: TandemError.self, "\(filter)") { try db.search("searched_notes", matching: "milk", where: filter) }
        }
        #expect(try db.search("searched_notes", matching: "milk", where: "(title = 'milk (x)') AND \"pinned\" = 0").compactMap { $0["id"]?.stringValue } == ["a"])
    }

    @Test func theSchemaRefusesAnIndexThatCannotWork() {
        let bad: [(TableSchema, String?)] = [
            (TableSchema(name: "t", columns: [.text("a")], search: SearchIndex(columns: [])), nil),
            (TableSchema(name: "t", columns: [.text("a")], search: SearchIndex(columns: ["b"])), "b"),
            (TableSchema(name: "t", columns: [.integer("a")], search: SearchIndex(columns: ["a"])), "a"),
            (TableSchema(name: "t", columns: [.text("a")], search: SearchIndex(columns: ["a", "a"])), "a"),
            (TableSchema(name: "t", columns: [.text("a")], insertOnly: true, search: SearchIndex(columns: ["a"])), nil),
            (TableSchema(name: "t", columns: [.text("a"), .real("Search_Rank")], search: SearchIndex(columns: ["a"])), "Search_Rank"),
            (TableSchema(name: "t", columns: [.text("rank")], search: SearchIndex(columns: ["rank"])), "rank"),
        ]
        for (table, column) in bad {
            #expect(throws: TandemError.self) { try Schema(tables: [table]).validate() }
            do { try Schema(tables: [table]).validate() } catch TandemError.invalidSchema(let problem) {
                #expect(problem.kind == .invalidSearch && problem.table == "t" && problem.column == column, "\(problem)")
            } catch { Issue.record("\(error)") }
        }
        #expect(throws: TandemError.self) {
            try Schema(json: Data(#"{"tables":[{"name":"t","columns":[{"name":"a","type":"text"}],"search":{"columns":["a"],"tokenizer":"soundex"}}]}"#.utf8))
        }
    }
}
