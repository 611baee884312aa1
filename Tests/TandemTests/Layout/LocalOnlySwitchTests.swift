import Foundation
import Testing
@testable import Tandem

/// Every switch among local-only, synced and insert-only with changes waiting for upload, both
/// ways, through `tandem init` and `tandem sync`: a table that becomes local-only uploads nothing
/// more (a synced table's pending changes are withdrawn, an insert-only table's pending inserts
/// become its rows here); one that becomes synced or insert-only uploads what it holds.
@Suite struct LocalOnlySwitchTests {
    enum Mode: String, CaseIterable, CustomStringConvertible {
        case localOnly, synced, insertOnly
        var description: String { rawValue }
    }

    static func schema(_ mode: Mode) -> Schema {
        Schema(tables: [
            TableSchema(name: "t", columns: [.text("v")], localOnly: mode == .localOnly, insertOnly: mode == .insertOnly),
            TableSchema(name: "other", columns: [.text("v")]),
        ])
    }

    static let transitions: [(Mode, Mode)] = Mode.allCases.flatMap { from in Mode.allCases.filter { $0 != from }.map { (from, $0) } }

    @Test(arguments: transitions)
    func pendingChangesFollowTheTablesNewMode(from: Mode, to: Mode) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let server = dir.path("server.db")
        #expect(try tandem(["init", path, "--schema", try dir.schemaFile(Self.schema(from), name: "before.json")]).status == 0)
        // Changes waiting: an insert and (where rows are kept) an update of t, and one of another table.
        let write = try tandem(["exec", path, "INSERT INTO t(id, v) VALUES ('r1', 'one'), ('r2', 'two'); INSERT INTO other(id, v) VALUES ('o1', 'x')"])
        #expect(write.status == 0, "\(write.stderr)")
        if from != .insertOnly { #expect(try tandem(["exec", path, "UPDATE t SET v = 'one more' WHERE id = 'r1'"]).status == 0) }

        let upgrade = try runTandem(
            ["init", path, "--schema", try dir.schemaFile(Self.schema(to), name: "after.json")] + (from == .localOnly ? ["--upload-local-rows"] : []))
        #expect(upgrade.status == 0, "\(upgrade.stderr)")
        let expectedR1 = from == .insertOnly ? "one" : "one more"
        switch (from, to) {
        case (.synced, .localOnly):
            #expect(upgrade.stdout.contains("3 changes waiting for upload are withdrawn and never uploaded"), "\(upgrade.stdout)")
        case (.insertOnly, .localOnly):
            #expect(upgrade.stdout.contains("its 2 inserts waiting for upload become rows on this host and are never uploaded"), "\(upgrade.stdout)")
        default: break
        }
        #expect(!upgrade.stdout.contains("ps_"), "\(upgrade.stdout)")

        let sync = try tandem(["sync", path, "--backend", "sqlite:" + server])
        #expect(sync.status == 0, "\(sync.stderr)")
        let uploaded = try EmbeddedBackend(path: server).rows()
        #expect(uploaded.contains { $0.table == "other" && $0.id == "o1" }, "the other table's change is uploaded")
        let uploadedT = uploaded.filter { $0.table == "t" }.map(\.id).sorted()
        if to == .localOnly {
            #expect(uploadedT.isEmpty, "\(from) → local-only uploaded \(uploadedT)")
            // The rows stay on this host: a synced table's as they were, an insert-only table's
            // pending inserts as rows.
            let rows = try tandem(["query", path, "SELECT id || '=' || v FROM t ORDER BY id", "--mode", "csv", "--no-header"])
            #expect(rows.stdout.split(whereSeparator: \.isNewline).map(String.init) == ["r1=\(expectedR1)", "r2=two"], "\(rows.stdout) \(rows.stderr)")
        } else {
            #expect(uploadedT == ["r1", "r2"], "\(from) → \(to) uploaded \(uploadedT)")
            let data = try #require(uploaded.first { $0.table == "t" && $0.id == "r1" }).data
            #expect(data.contains(expectedR1), "\(data)")
        }
        let queue = try tandem(["status", path, "--json"])
        #expect(queue.stdout.contains(#""pending_uploads":0"#), "\(queue.stdout)")
        #expect(try tandem(["check", path]).status == 0)
    }
}
