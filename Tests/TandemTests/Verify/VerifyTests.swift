import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// Proof of agreement: `tandem verify` compares a client's rows with the server's by checksums,
/// names each row that drifted behind Tandem's back (on the client or on the server), leaves out
/// pending edits and rows the client has not downloaded yet, and `--repair` makes the client equal
/// the server again, pending edits kept. Both backends, real processes, generated values.
@Suite struct VerifyTests {
    static let schema = Schema(tables: [
        TableSchema(name: "items", columns: [.text("title"), .integer("n"), .real("r"), .text("Zed")]),
        TableSchema(name: "tags", columns: [.text("label")]),
        TableSchema(name: "drafts", columns: [.text("body")], localOnly: true),
    ])

    /// A generated value of `type`: the data promise's adversarial values among random ones.
    static func value(_ type: ColumnSchema.ColumnType, _ random: inout SeededRandom) -> DatabaseValue {
        if Int.random(in: 0..<8, using: &random) == 0 { return .null }
        switch type {
        case .integer:
            let pool = adversarialValues.compactMap { if case .integer(let i) = $0 { i } else { nil } }
            return .integer(Bool.random(using: &random) ? pool.randomElement(using: &random)! : Int64.random(in: .min ... .max, using: &random))
        case .real:
            let pool = adversarialValues.compactMap { if case .double(let d) = $0 { d } else { nil } }
            if Bool.random(using: &random) { return .real(pool.randomElement(using: &random)!) }
            var bits = Double(bitPattern: random.next())
            while !bits.isFinite { bits = Double(bitPattern: random.next()) }
            return .real(bits)
        case .text:
            let pool = adversarialValues.compactMap { if case .string(let s) = $0 { s } else { nil } }
            if Bool.random(using: &random) { return .text(pool.randomElement(using: &random)!) }
            let scalars = (0..<Int.random(in: 0..<12, using: &random)).map { _ -> Character in
                let choices: [UInt32] = [0, 1, 0x1F, 0x22, 0x5C, 0x7F, 0xE9, 0x301, 0xFFFF, 0x1F600, UInt32.random(in: 0x20..<0x7F, using: &random)]
                return Character(Unicode.Scalar(choices.randomElement(using: &random)!)!)
            }
            return .text(String(scalars))
        }
    }

    /// Writes `count` generated rows into `items` and `tags` of `db` (ids hold NUL and U+FFFF too).
    static func writeGeneratedRows(_ db: SharedDatabase, seed: UInt64, count: Int) throws {
        var random = SeededRandom(seed: seed)
        try db.write { tx in
            for index in 0..<count {
                let id = index % 17 == 0 ? "id\u{0}\(seed)-\(index)\u{FFFF}" : "\(seed)-\(index)"
                let values = [DatabaseValue.text(id)] + [ColumnSchema.ColumnType.text, .integer, .real, .text].map { value($0, &random) }
                try tx.execute("INSERT INTO items(id, title, n, r, Zed) VALUES (?, ?, ?, ?, ?)", values)
                try tx.execute("INSERT INTO tags(id, label) VALUES (?, ?)", [id, value(.text, &random)])
            }
        }
    }

    static func verify(_ path: String, _ url: String, _ options: [String] = []) throws -> (status: Int32, report: [String: Any], stderr: String) {
        let run = try tandem(["verify", path, "--backend", url, "--json"] + options)
        let object = (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
        return (run.status, object, run.stderr)
    }

    static func table(_ report: [String: Any], _ name: String) -> [String: Any] {
        ((report["tables"] as? [[String: Any]]) ?? []).first { $0["table"] as? String == name } ?? [:]
    }

    static func differences(_ report: [String: Any], _ name: String) -> [String: String] {
        var found: [String: String] = [:]
        for difference in table(report, name)["differences"] as? [[String: Any]] ?? [] {
            found[difference["id"] as? String ?? ""] = difference["kind"] as? String
        }
        return found
    }

    /// Generated rows agree after sync (checksums only: one round trip per table); each kind of
    /// drift is named, pending and in-flight rows are left out, and a repair restores agreement
    /// keeping the pending edit, which then uploads.
    func driftIsNamedAndRepaired(url: String, serverDrift: (String) throws -> Void, in dir: TemporaryDirectory) throws {
        let a = dir.path("a.db"), b = dir.path("b.db")
        let dbA = try SharedDatabase(path: a, schema: Self.schema)
        try SharedDatabase(path: b, schema: Self.schema).close()
        for seed: UInt64 in [1, 2, 3] { try Self.writeGeneratedRows(dbA, seed: seed, count: 150) }
        dbA.close()
        for path in [a, b] { #expect(try tandem(["sync", path, "--backend", url]).status == 0) }
        for path in [a, b] {
            let agreed = try Self.verify(path, url)
            #expect(agreed.status == 0, "\(path): \(agreed.report) \(agreed.stderr)")
            #expect(agreed.report["agrees"] as? Bool == true && agreed.report["round_trips"] as? Int == 2, "checksums only: \(agreed.report)")
            #expect(Self.table(agreed.report, "items")["local_rows"] as? Int == 450 && Self.table(agreed.report, "items")["server_rows"] as? Int == 450)
        }

        // Behind the capture on B (the sqlite3 shell on the data table): a value changed, a row
        // removed, a row made up. Behind the log on the server: one row changed.
        let changed = "1-3", removed = "2-5", ghost = "ghost\u{0}row", pending = "3-7", serverChanged = "2-8", inFlight = "1-9"
        // Two ids Swift's String equality takes for one (é, and e with a combining accent): to
        // SQLite and PostgreSQL they are two rows, and the drift of one is not the other's.
        #expect(try tandem(["exec", a, "INSERT INTO items(id, title) VALUES ('\u{E9}', 'composed'), ('e\u{301}', 'decomposed')"]).status == 0)
        #expect(try tandem(["sync", a, "--backend", url]).status == 0)
        #expect(try tandem(["sync", b, "--backend", url]).status == 0)
        try sqlite(b, "UPDATE ps_data__items SET data = json_set(data, '$.title', 'drifted') WHERE id = 'e' || char(769)")
        try sqlite(b, "UPDATE ps_data__items SET data = json_set(data, '$.n', 424242) WHERE id = '\(changed)'")
        try sqlite(b, "DELETE FROM ps_data__items WHERE id = '\(removed)'")
        try sqlite(b, "INSERT INTO ps_data__items(id, data) VALUES ('ghost' || char(0) || 'row', '{\"title\":\"made up\"}')")
        try sqlite(b, "UPDATE ps_data__items SET data = json_set(data, '$.title', 'drifted too') WHERE id = '\(pending)'")
        try serverDrift(serverChanged)
        // A pending edit on B (of a drifted row), and a change on the server B has not downloaded.
        #expect(try tandem(["exec", b, "UPDATE items SET Zed = 'pending edit' WHERE id = ?", pending]).status == 0)
        #expect(try tandem(["exec", a, "UPDATE items SET title = 'newer' WHERE id = ?", inFlight]).status == 0)
        #expect(try tandem(["sync", a, "--backend", url]).status == 0)

        let found = try Self.verify(b, url)
        #expect(found.status == 3, "\(found.report) \(found.stderr)")
        let expected = [changed: "different_values", removed: "only_on_server", ghost: "only_here", serverChanged: "different_values"]
        let found_ = Self.differences(found.report, "items")
        #expect(found_.filter { $0.key.unicodeScalars.first != "e" && $0.key != "\u{E9}" } == expected, "\(found.report)")
        let accented = ((Self.table(found.report, "items")["differences"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
            .filter { $0.unicodeScalars.count <= 2 && ($0.unicodeScalars.first == "e" || $0.unicodeScalars.first == "\u{E9}") }
        #expect(accented.map { Array($0.unicodeScalars) } == [["e", "\u{301}"]], "only the decomposed id drifted: \(accented.map { Array($0.unicodeScalars) })")
        #expect(Self.table(found.report, "items")["pending_rows"] as? Int == 1 && Self.table(found.report, "items")["in_flight_rows"] as? Int == 1, "\(found.report)")
        #expect(Self.table(found.report, "tags")["agrees"] as? Bool == true)
        let text = try tandem(["verify", b, "--backend", url])
        #expect(text.stdout.contains("items id 'ghost\\0row': only here") || text.stdout.contains("items id 'ghost"), "\(text.stdout)")

        // The repair writes the server's rows, keeps the pending edit, and queues nothing.
        let queuedBefore = try SharedDatabase(path: b).uploadQueue.pendingCount()
        let repaired = try Self.verify(b, url, ["--repair"])
        #expect(repaired.status == 0, "\(repaired.report) \(repaired.stderr)")
        #expect(Self.table(repaired.report, "items")["repaired_rows"] as? Int == 5)
        let dbB = try SharedDatabase(path: b)
        #expect(try dbB.uploadQueue.pendingCount() == queuedBefore)
        #expect(try dbB.fetchAll("SELECT Zed FROM items WHERE id = ?", [pending]).first?[0] == .text("pending edit"))
        dbB.close()
        let again = try Self.verify(b, url)
        #expect(again.status == 0 && again.report["agrees"] as? Bool == true, "\(again.report)")
        // B syncs: its pending edit goes up, and B and the server agree with nothing left out.
        #expect(try tandem(["sync", b, "--backend", url]).status == 0)
        let synced = try Self.verify(b, url)
        #expect(synced.status == 0 && Self.table(synced.report, "items")["pending_rows"] as? Int == 0, "\(synced.report)")
        #expect(Self.table(synced.report, "items")["in_flight_rows"] as? Int == 0, "\(synced.report)")
        // A missed the server's change too (behind the log): it finds and repairs it.
        #expect(try tandem(["sync", a, "--backend", url]).status == 0)
        let onA = try Self.verify(a, url, ["--repair"])
        #expect(Self.differences(onA.report, "items") == [serverChanged: "different_values"], "\(onA.report)")
        let status = try tandem(["status", a, "--json"])
        #expect(status.stdout.contains(#""last_verification":{"#) && status.stdout.contains(#""repaired_rows":1"#), "\(status.stdout)")
    }

    @Test func driftIsNamedAndRepairedEmbedded() throws {
        let dir = try TemporaryDirectory()
        let server = dir.path("server.db")
        try driftIsNamedAndRepaired(
            url: "sqlite:" + server,
            serverDrift: { id in try sqlite(server, "UPDATE server_rows SET data = json_set(data, '$.r', 0.5) WHERE type = 'items' AND id = '\(id)'") },
            in: dir)
    }

    @Test(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
    func driftIsNamedAndRepairedPostgres() throws {
        let dir = try TemporaryDirectory()
        let url = try TestPostgres.database(schema: Self.schema)
        try driftIsNamedAndRepaired(
            url: url,
            serverDrift: { id in
                // Triggers off: the server's change log never hears of it.
                let server = try PostgresConnection(url)
                try server.execute("SET session_replication_role = replica")
                try server.execute("UPDATE items SET r = 0.5 WHERE id = '\(id)'")
            },
            in: dir)
    }

    /// A client file restored from an earlier backup holds an earlier state, not a drifted one:
    /// verify counts the rows changed since as in flight and reports nothing, and after a sync
    /// the client agrees with nothing left out.
    @Test func aRestoredBackupIsBehindNotDrifted() throws {
        let dir = try TemporaryDirectory()
        let url = "sqlite:" + dir.path("server.db")
        let a = dir.path("a.db"), b = dir.path("b.db")
        let dbA = try SharedDatabase(path: a, schema: Self.schema)
        try SharedDatabase(path: b, schema: Self.schema).close()
        try Self.writeGeneratedRows(dbA, seed: 7, count: 100)
        for path in [a, b] { #expect(try tandem(["sync", path, "--backend", url]).status == 0) }
        #expect(try tandem(["backup", b, dir.path("yesterday.db")]).status == 0)
        try dbA.execute("UPDATE items SET title = 'today' WHERE id IN ('7-1', '7-2')")
        try dbA.execute("DELETE FROM items WHERE id = '7-3'")
        dbA.close()
        for path in [a, b] { #expect(try tandem(["sync", path, "--backend", url]).status == 0) }
        let restore = try tandem(["restore", dir.path("yesterday.db"), b])
        #expect(restore.status == 0, "\(restore.stderr)")
        let behind = try Self.verify(b, url)
        #expect(behind.status == 0, "\(behind.report) \(behind.stderr)")
        #expect(Self.table(behind.report, "items")["in_flight_rows"] as? Int == 3, "\(behind.report)")
        #expect(try tandem(["sync", b, "--backend", url]).status == 0)
        let current = try Self.verify(b, url)
        #expect(current.status == 0 && Self.table(current.report, "items")["in_flight_rows"] as? Int == 0, "\(current.report)")
    }

    /// The owner verifies at its interval: agreement is an event and the status; drift made
    /// behind the server's log is a `drift_found` event naming the table, and the status says so
    /// in every process.
    @Test func theOwnerVerifiesInTheBackgroundAndReportsDrift() throws {
        let dir = try TemporaryDirectory()
        let server = dir.path("server.db"), a = dir.path("a.db")
        let db = try SharedDatabase(path: a, schema: Self.schema)
        try Self.writeGeneratedRows(db, seed: 9, count: 50)
        db.close()
        let app = try Spawned(["app", a, "--backend", "sqlite:" + server, "--json", "--verify-every", "300ms"])
        defer { app.signal(SIGTERM) }
        try app.waitForLine(timeout: 30, "a verification that agrees") { $0.contains(#""event":"verified""#) }
        let agreed = try tandem(["status", a, "--json"])
        #expect(agreed.stdout.contains(#""last_verification":{"#) && agreed.stdout.contains(#""agrees":true"#), "\(agreed.stdout)")
        try sqlite(server, "UPDATE server_rows SET data = json_set(data, '$.n', 7) WHERE type = 'items' AND id = '9-1'")
        try app.waitForLine(timeout: 30, "the drift reported") { $0.contains(#""event":"drift_found""#) && $0.contains(#""differing_tables":["items"]"#) }
        let drifted = try tandem(["status", a])
        #expect(drifted.stdout.contains("1 row(s) differed (items)"), "\(drifted.stdout)")
        app.signal(SIGTERM)
        #expect(try app.wait(timeout: 30) == 0)
        let usage = try runTandem(["app", a, "--backend", "sqlite:" + server, "--verify-every", "soon"])
        #expect(usage.status == 2 && usage.stderr.contains("--verify-every takes a duration"), "\(usage.stderr)")
    }

    /// Bad requests change nothing and say why in the user's terms.
    @Test func refusalsSayWhy() throws {
        let dir = try TemporaryDirectory()
        let url = "sqlite:" + dir.path("server.db")
        let a = dir.path("a.db")
        try SharedDatabase(path: a, schema: Self.schema).close()
        let never = try tandem(["verify", a, "--backend", url])
        #expect(never.status == 1 && never.stderr.contains("has not synced yet"), "\(never.stderr)")
        #expect(try tandem(["sync", a, "--backend", url]).status == 0)
        let local = try tandem(["verify", a, "--backend", url, "--table", "drafts"])
        #expect(local.status == 1 && local.stderr.contains("table drafts is local-only"), "\(local.stderr)")
        let unknown = try tandem(["verify", a, "--backend", url, "--table", "nope"])
        #expect(unknown.status == 1 && unknown.stderr.contains("table nope is not declared"), "\(unknown.stderr)")
        let other = try tandem(["verify", a, "--backend", "sqlite:" + dir.path("other.db")])
        #expect(other.status != 0 && !FileManager.default.fileExists(atPath: dir.path("other.db")), "\(other.stderr)")
    }
}

/// A scoped role verifies its own slice: another tenant's rows and their drift are not its
/// business, its own drift is found.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct ScopedVerifyTests {
    @Test func aScopedRoleVerifiesItsSlice() throws {
        let fleet = try ScopedSyncTests.Fleet()
        let a1 = try fleet.client("a1"), b1 = try fleet.client("b1")
        try a1.execute("INSERT INTO folders(id, name, tenant) VALUES ('fa', 'A folder', 'A')")
        try a1.execute("INSERT INTO notes(id, title, folder_id) VALUES ('na', 'A note', 'fa')")
        try b1.execute("INSERT INTO folders(id, name, tenant) VALUES ('fb', 'B folder', 'B')")
        a1.close()
        b1.close()
        for role in ["a1", "b1", "a1"] { try fleet.sync(role) }
        let path = fleet.dir.path("a1.db")
        let agreed = try VerifyTests.verify(path, fleet.url("a1"))
        #expect(agreed.status == 0 && VerifyTests.table(agreed.report, "folders")["server_rows"] as? Int == 1, "\(agreed.report) \(agreed.stderr)")
        let admin = try PostgresConnection(fleet.admin)
        try admin.execute("SET session_replication_role = replica")
        try admin.execute("UPDATE folders SET name = 'drifted' WHERE id IN ('fa', 'fb')")
        let found = try VerifyTests.verify(path, fleet.url("a1"))
        #expect(found.status == 3 && VerifyTests.differences(found.report, "folders") == ["fa": "different_values"], "\(found.report)")
    }
}
