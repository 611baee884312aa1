import Foundation
import Testing
@testable import Tandem

/// `tandem init` says what an upgrade does to stored rows, and refuses (changing nothing) to
/// upload a local-only table's rows without `--upload-local-rows`; `backend reset` says how many
/// synced rows it deleted.
@Suite struct SchemaUpgradeTests {
    enum Kind: String, CaseIterable { case local, synced, insertOnly }

    func table(_ kind: Kind, name: String = "items") -> TableSchema {
        TableSchema(name: name, columns: [.text("t"), .integer("n")], localOnly: kind == .local, insertOnly: kind == .insertOnly)
    }

    func fingerprint(_ path: String) throws -> [String] {
        try databaseFingerprint(path)
    }

    /// Every switch between the three kinds of table, with rows and without: the flag is needed
    /// exactly when rows of a local-only table would be queued for upload, and each switch that
    /// moves rows is said.
    @Test func everySwitchOfKindSaysWhatItDoesAndUploadingLocalRowsNeedsTheFlag() throws {
        for from in Kind.allCases {
            for to in Kind.allCases where to != from {
                for rows in [0, 3] {
                    let dir = try TemporaryDirectory()
                    let path = dir.path("a.db")
                    do {
                        let db = try SharedDatabase(path: path, schema: Schema(tables: [table(from), table(.synced, name: "other")]))
                        for index in 0..<rows { try db.execute("INSERT INTO items(id, t) VALUES (?, 'x')", ["r\(index)"]) }
                    }
                    let queuedBefore = try SharedDatabase(path: path).uploadQueue.pendingCount()
                    let file = try dir.schemaFile(Schema(tables: [table(to), table(.synced, name: "other")]))
                    let what = "\(from) → \(to) with \(rows) rows"
                    let uploads = from == .local && rows > 0
                    if uploads {
                        let before = try fingerprint(path)
                        let refused = try tandem(["init", path, "--schema", file])
                        #expect(refused.status == 1, "\(what): \(refused.stdout)")
                        #expect(
                            refused.stderr.contains(
                                "their rows would be queued for upload and leave this host: items (\(rows) rows); nothing was changed. Run again with --upload-local-rows"),
                            "\(what): \(refused.stderr)")
                        #expect(try fingerprint(path) == before, "\(what): a refused init changed the file")
                    }
                    let result = try tandem(["init", path, "--schema", file] + (uploads ? ["--upload-local-rows"] : []))
                    #expect(result.status == 0, "\(what): \(result.stderr)")
                    let said: String? =
                        switch (from, to) {
                        case (.local, _) where rows > 0: "items: local-only until now; its \(rows) rows are queued for upload and leave this host"
                        case (.synced, .local): "items: local-only from now on; its \(rows) rows stay on this host and are no longer synced"
                        case (.synced, .insertOnly): "items: insert-only from now on; its \(rows) rows leave the table"
                        default: nil
                        }
                    if let said { #expect(result.stdout.contains(said), "\(what): \(result.stdout)") }
                    let queued = try SharedDatabase(path: path).uploadQueue.pendingCount() - queuedBefore
                    // Switched to local-only, the table's changes waiting for upload are withdrawn.
                    #expect(queued == (from == .local ? rows : to == .local ? -rows : 0), "\(what): \(queued) entries queued")
                }
            }
        }
    }

    @Test func droppedTablesAndColumnsAreSaid() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        do {
            let db = try SharedDatabase(path: path, schema: Schema(tables: [table(.synced), table(.local, name: "drafts")]))
            try db.execute("INSERT INTO items(id, t, n) VALUES ('a', 'x', 1), ('b', 'y', 2)")
            try db.execute("INSERT INTO drafts(id, t) VALUES ('d', 'z')")
        }
        let narrower = TableSchema(name: "items", columns: [.text("t")])
        let result = try tandem(["init", path, "--schema", try dir.schemaFile(Schema(tables: [narrower]))])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("items.n: no longer declared; its values stay in the stored rows, unread"), "\(result.stdout)")
        #expect(result.stdout.contains("drafts: no longer declared; its 1 row stays in the file, unread, until it is declared again"), "\(result.stdout)")
        let json = try tandem(["init", path, "--schema", try dir.schemaFile(Schema(tables: []), name: "none.json"), "--json"])
        #expect(json.stdout.contains(#""items: no longer declared; its 2 rows stay in the file, unread, until it is declared again""#), "\(json.stdout)")
    }

    @Test func backendResetSaysHowManySyncedRowsItDeleted() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: Schema(tables: [table(.synced), table(.synced, name: "other"), table(.local, name: "drafts")]))
        try db.execute("INSERT INTO items(id, t) VALUES ('a', 'x'), ('b', 'y'), ('c', 'z')")
        try db.execute("INSERT INTO other(id, t) VALUES ('o', 'x')")
        try db.execute("INSERT INTO drafts(id, t) VALUES ('d', 'x')")
        #expect(try tandem(["sync", db.path, "--backend", "sqlite:" + dir.path("server.db")]).status == 0)
        let reset = try tandem(["backend", "reset", db.path])
        #expect(reset.status == 0, "\(reset.stderr)")
        #expect(reset.stdout.contains("deleted 4 synced rows from this file (items 3, other 1), which the backend keeps; local-only tables kept"), "\(reset.stdout)")
        #expect(try count(db, "SELECT count(*) FROM drafts") == 1)
    }
}

/// `Configuration.upgradesSchema = false`: a file whose stored schema differs is refused and left
/// as it is; the same schema, a new file and a file without a schema open as usual.
@Suite struct SchemaKeptTests {
    @Test func aStoredSchemaIsNeverChangedWhenUpgradesAreOff() throws {
        let dir = try TemporaryDirectory()
        var keep = Configuration()
        keep.upgradesSchema = false
        let path = dir.path("a.db")
        _ = try SharedDatabase(path: path, schema: notesSchema, configuration: keep)  // a new file gets it
        _ = try SharedDatabase(path: path, schema: notesSchema, configuration: keep)  // the same schema opens
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for other in [twoTables, Schema(tables: [])] {
            do {
                _ = try SharedDatabase(path: path, schema: other, configuration: keep)
                Issue.record("another schema was installed over the stored one")
            } catch TandemError.invalidSchema(let problem) {
                #expect(problem.message.contains("stores another schema, which is kept"), "\(problem)")
                #expect(problem.kind == .storedSchemaDiffers)
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the file is unchanged")
        #expect(try SharedDatabase(path: path).schema == notesSchema)
        // With upgrades on (the default), the same call upgrades it.
        #expect(try SharedDatabase(path: path, schema: twoTables).schema == twoTables)
    }
}
