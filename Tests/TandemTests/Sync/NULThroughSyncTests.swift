import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// Text and ids with NUL and U+FFFF, in every position, through each backend between hosts (real
/// `tandem sync` processes): every value reads back exactly as written, after inserts, updates,
/// deletes and a full sync (whose sweep once took a row with NUL in its id for one the server no
/// longer has: SQLite's JSON functions end text at an escaped NUL).
@Suite struct NULThroughSyncTests {
    static let backends = ["sqlite"] + (TestPostgres.url == nil ? [] : ["postgres"])

    /// Every string of up to three scalars from a small alphabet that holds NUL and U+FFFF, and
    /// the sample texts.
    static let texts: [String] = {
        let alphabet: [String] = ["\u{0}", "\u{FFFF}", "0", "a", "\u{301}"]
        var texts = Set(ExactnessSamples.texts)
        var layer = [""]
        for _ in 0..<3 {
            layer = layer.flatMap { prefix in alphabet.map { prefix + $0 } }
            texts.formUnion(layer)
        }
        return texts.sorted()
    }()

    /// Each row's id and title as their UTF-8 bytes (Swift's `==` on strings is canonical
    /// equivalence, which would take a changed normalization for the same text).
    private func titles(_ db: SharedDatabase) throws -> [[UInt8]: [UInt8]] {
        Dictionary(
            uniqueKeysWithValues: try db.fetchAll("SELECT id, title FROM notes").map {
                (Array(($0[0].stringValue ?? "").utf8), Array(($0[1].stringValue ?? "NULL").utf8))
            })
    }

    @Test(arguments: backends) func everyValueReadsBackExactlyOnTheOtherHost(backend: String) throws {
        let dir = try TemporaryDirectory()
        let url = backend == "postgres" ? try TestPostgres.database(schema: notesSchema) : "sqlite:" + dir.path("server.db")
        let a = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema), b = try SharedDatabase(path: dir.path("b.db"), schema: notesSchema)
        try a.write { tx in
            for (index, text) in Self.texts.enumerated() {
                try tx.execute("INSERT INTO notes(id, title) VALUES (?, ?)", ["id\(index):" + text, text])
            }
        }
        let before = try titles(a).count
        #expect(before == Self.texts.count, "written locally")
        for db in [a, b] { #expect(try syncOnce(db, url)) }
        let written = try titles(a)
        let missing = Self.texts.indices.filter { index in !written.keys.contains(Array(("id\(index):" + Self.texts[index]).utf8)) }
        #expect(missing.isEmpty, "rows lost at the sync: \(missing.prefix(8).map { Self.texts[$0].debugDescription })")
        #expect(try titles(b) == written, "B reads what A wrote")
        // Updates (one column: PATCH) and deletes, alone and in batches.
        try a.write { tx in
            for (index, text) in Self.texts.enumerated() where index % 3 == 0 {
                try tx.execute("UPDATE notes SET title = ? WHERE id = ?", [text + "\u{0}\u{FFFF}", "id\(index):" + text])
            }
        }
        for (index, text) in Self.texts.enumerated() where index % 3 == 1 {
            try a.execute("DELETE FROM notes WHERE id = ?", ["id\(index):" + text])
        }
        for db in [a, b] { #expect(try syncOnce(db, url)) }
        #expect(try titles(b) == titles(a), "B follows A's updates and deletes")
        #expect(try titles(a).count == Self.texts.count - Self.texts.indices.filter { $0 % 3 == 1 }.count)
        // A third host's first (full) sync reads the same.
        let c = try SharedDatabase(path: dir.path("c.db"), schema: notesSchema)
        #expect(try syncOnce(c, url))
        #expect(try titles(c) == titles(a))
    }
}
