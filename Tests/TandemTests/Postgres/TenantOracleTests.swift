import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// PostgreSQL as the oracle of scoped sync: random inserts, updates, deletes and scope moves by
/// the administrator, by three hosts of two tenants and by `psql` sessions as their roles, with
/// grants and revocations in between. After each host's sync, its rows equal what `SELECT`
/// returns to its role under row-level security, and each transaction it had pending is on the
/// server (its marker written and its last write of each row there) or set aside, never neither.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct TenantOracleTests {
    typealias Fleet = ScopedSyncTests.Fleet

    static let columns = ["folders": ["name", "tenant"], "notes": ["title", "folder_id"], "settings": ["value"]]

    /// `table`'s rows as `id|column=value|…` lines, through `fetch` (a local or a server query).
    private func rows(_ table: String, _ fetch: (String) throws -> [[String?]]) rethrows -> [String] {
        let names = Self.columns[table]!
        let sql = "SELECT id, \(names.joined(separator: ", ")) FROM \(table) ORDER BY id"
        return try fetch(sql).map { row in
            zip(["id"] + names, row).map { "\($0)=\($1 ?? "NULL")" }.joined(separator: "|")
        }.sorted()
    }

    private func local(_ db: SharedDatabase) -> (String) throws -> [[String?]] {
        { sql in try db.fetchAll(sql).map { $0.values.map { $0.stringValue } } }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func everyHostHoldsWhatItsRoleSelectsAndNoEditVanishes(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let fleet = try Fleet()
        let admin = try PostgresConnection(fleet.admin)
        let hosts = ["a1", "b1", "b2"]
        let dbs = try Dictionary(uniqueKeysWithValues: hosts.map { ($0, try fleet.client($0)) })
        let sessions = try Dictionary(uniqueKeysWithValues: hosts.map { ($0, try PostgresConnection(fleet.url($0))) })
        var serial = 0
        func newID(_ prefix: String) -> String {
            serial += 1
            return "\(prefix)\(serial)"
        }
        func anyID(_ table: String, _ fetch: (String) throws -> [[String?]]) throws -> String? {
            try fetch("SELECT id FROM \(table) ORDER BY id").compactMap { $0[0] ?? nil }.randomElement(using: &random)
        }
        let tenants = ["A", "B", "C"]
        /// One random write through `execute` (errors ignored: a role's refusals), reading ids through `fetch`.
        func write(_ execute: (String, [String]) throws -> Void, _ fetch: (String) throws -> [[String?]], mostly own: String? = nil) throws {
            let tenant = own.flatMap { Int.random(in: 0..<4, using: &random) > 0 ? $0 : nil } ?? tenants.randomElement(using: &random)!
            switch Int.random(in: 0..<9, using: &random) {
            case 0, 1: try? execute("INSERT INTO folders(id, name, tenant) VALUES ($1, $2, $3)", [newID("f"), "folder \(serial)", tenant])
            case 2, 3:
                guard let folder = try anyID("folders", fetch) else { return }
                try? execute("INSERT INTO notes(id, title, folder_id) VALUES ($1, $2, $3)", [newID("n"), "note \(serial)", folder])
            case 4:
                guard let note = try anyID("notes", fetch) else { return }
                try? execute("UPDATE notes SET title = $1 WHERE id = $2", ["edit \(newID("e"))", note])
            case 5:
                guard let folder = try anyID("folders", fetch) else { return }
                try? execute("UPDATE folders SET tenant = $1, name = $2 WHERE id = $3", [tenant, "moved \(newID("m"))", folder])
            case 6:
                guard let note = try anyID("notes", fetch) else { return }
                try? execute("DELETE FROM notes WHERE id = $1", [note])
            case 7:
                guard let folder = try anyID("folders", fetch) else { return }
                try? execute("DELETE FROM folders WHERE id = $1", [folder])
            default:
                try? execute("INSERT INTO settings(id, value) VALUES ($1, $2)", [newID("s"), "value \(serial)"])
            }
        }
        func localExecute(_ db: SharedDatabase) -> (String, [String]) throws -> Void {
            { sql, values in
                var sqlite = sql
                for index in stride(from: values.count, through: 1, by: -1) { sqlite = sqlite.replacingOccurrences(of: "$\(index)", with: "?\(index)") }
                try db.execute(sqlite, values.map { DatabaseValue.text($0) })
            }
        }
        func serverExecute(_ connection: PostgresConnection) -> (String, [String]) throws -> Void {
            { sql, values in _ = try connection.execute(sql, values) }
        }
        let serverFetch: (String) throws -> [[String?]] = { try admin.execute($0) }

        var counts = (uploaded: 0, setAside: 0)
        for step in 0..<40 {
            let context = "seed \(seed), step \(step)"
            switch Int.random(in: 0..<10, using: &random) {
            case 0, 1: try write(serverExecute(admin), serverFetch)
            case 2:
                let host = hosts.randomElement(using: &random)!
                try write(serverExecute(sessions[host]!), { try sessions[host]!.execute($0) })
            case 3:
                let host = hosts.randomElement(using: &random)!, role = "\(fleet.prefix)_\(host)"
                let scopes = Array(tenants.shuffled(using: &random).prefix(Int.random(in: 1...2, using: &random)))
                if Bool.random(using: &random) {
                    try PostgresBackend.grant(conninfo: fleet.admin, role: role, scopes: scopes, writeGlobal: host == "a1")
                } else {
                    try PostgresBackend.revoke(conninfo: fleet.admin, role: role, scopes: scopes)
                }
            default:
                let host = hosts.randomElement(using: &random)!, db = dbs[host]!
                for _ in 0..<Int.random(in: 1...3, using: &random) { try write(localExecute(db), local(db), mostly: host == "a1" ? "A" : "B") }
            }
            // A quiet point: one host syncs, and is checked against its role's view.
            let host = hosts.randomElement(using: &random)!, db = dbs[host]!
            let pending = try db.uploadQueue.transactions(limit: 10_000)
            let rejectedBefore = Set(try db.uploadQueue.rejected().map(\.transaction.transactionID))
            let serverBefore = try Set(["folders", "notes", "settings"].flatMap { table in try rows(table, serverFetch).map { "\(table):\($0)" } })
            let result = try runTandem(["sync", db.path, "--backend", fleet.url(host)])
            #expect(result.status == 0 || result.status == 1, "\(context): sync \(host): \(result.stderr)")
            let rejected = Set(try db.uploadQueue.rejected().map(\.transaction.transactionID)).subtracting(rejectedBefore)
            counts.setAside += rejected.count
            counts.uploaded += pending.count - rejected.count
            let clientID = try db.clientID()
            for transaction in pending {
                let marked =
                    try admin.execute(
                        "SELECT count(*) FROM tandem_uploads u, unnest(coalesce(u.tx_ids, ARRAY[u.tx_id])) t WHERE u.client_id = $1 AND t = $2",
                        [clientID, String(transaction.transactionID)]
                    ).first?.first == "1"
                #expect(
                    marked != rejected.contains(transaction.transactionID),
                    "\(context): \(host)'s transaction \(transaction.transactionID) \(marked ? "both uploaded and set aside" : "neither uploaded nor set aside")")
            }
            // Each row's last write that was uploaded is what the server holds (a PATCH of a row already gone: the delete won).
            let uploaded = pending.filter { !rejected.contains($0.transactionID) }.flatMap(\.entries)
            var last: [String: CrudEntry] = [:]
            for entry in uploaded { last["\(entry.table)/\(entry.rowID)"] = entry }
            for entry in last.values {
                let row = try admin.execute("SELECT id, \(Self.columns[entry.table]!.joined(separator: ", ")) FROM \(entry.table) WHERE id = $1", [entry.rowID]).first
                let wasThere = serverBefore.contains { $0.hasPrefix("\(entry.table):id=\(entry.rowID)|") }
                switch entry.op {
                case .delete:
                    #expect(row == nil, "\(context): \(host) deleted \(entry.table) \(entry.rowID), the server keeps it")
                case .put, .patch:
                    if row == nil {
                        #expect(entry.op == .patch && !wasThere, "\(context): \(host)'s \(entry.op) of \(entry.table) \(entry.rowID) counted as uploaded, not on the server")
                        continue
                    }
                    for (column, value) in entry.data ?? [:] {
                        let index = Self.columns[entry.table]!.firstIndex(of: column).map { $0 + 1 }
                        let written: String? = if case .string(let text) = value { text } else { nil }
                        #expect(index.flatMap { row?[$0] } == written, "\(context): \(host)'s \(entry.table) \(entry.rowID).\(column)")
                    }
                }
            }
            let view = sessions[host]!
            for table in ["folders", "notes", "settings"] {
                let mine = try rows(table, local(db)), roles = try rows(table, { try view.execute($0) })
                #expect(mine == roles, "\(context): \(host)'s \(table) differs from what its role selects")
            }
        }
        // The run met both outcomes: uploads the server took, and refusals set aside.
        #expect(counts.uploaded > 5 && counts.setAside > 0, "seed \(seed): \(counts)")
    }
}
