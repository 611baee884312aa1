import Foundation
import Testing
@testable import Tandem

/// `tandem check --full` reads every stored row: values the `sqlite3` shell wrote straight into
/// the storage tables are named with table, row and column; `tandem init` stores those that
/// convert exactly as writes would, and leaves the others named.
@Suite struct StoredRowCheckTests {
    static let schema = Schema(tables: [TableSchema(name: "t", columns: [.integer("i"), .real("r"), .text("s")])])

    /// SQL text for `value` in a json_set.
    private func literal(_ value: DatabaseValue) -> String {
        switch value {
        case .integer(let i): String(i)
        case .real(let d): d == d.rounded() && abs(d) < 1e15 ? String(format: "%.1f", d) : String(format: "%.17g", d)
        case .text(let s): SQLText.literal(s)
        default: "NULL"
        }
    }

    @Test func everyStoredValueIsClassifiedByTheColumnsRule() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let values: [DatabaseValue] = [
            .integer(.max), .integer(9_007_199_254_740_993), .integer(-1), .real(2.5), .real(-0.0), .real(2.0), .real(1e300),
            .text("abc"), .text("12"), .text("2.5"), .text(" 7 "), .text(""), .text("{\"json\": 1}"),
        ]
        var script: [String] = []
        var expected: [String: (converted: [String], refused: [String])] = [:]
        do {
            let db = try SharedDatabase(path: path, schema: Self.schema)
            for (index, value) in values.enumerated() {
                let id = String(format: "r%02d", index)
                try db.execute("INSERT INTO t(id) VALUES (?)", [id])
                for column in Self.schema.tables[0].columns {
                    script.append("UPDATE ps_data__t SET data = json_set(data, '$.\(column.name)', \(literal(value))) WHERE id = '\(id)';")
                    let sameType: Bool
                    switch (value, column.type) {
                    case (.integer, .integer), (.real, .real), (.text, .text): sameType = true
                    default: sameType = false
                    }
                    guard !sameType else { continue }
                    if ColumnRule.stored(value, in: column.type) == nil {
                        expected[column.name, default: ([], [])].refused.append(id)
                    } else {
                        expected[column.name, default: ([], [])].converted.append(id)
                    }
                }
            }
        }
        script.append("INSERT INTO ps_data__t(id, data) VALUES ('x-array', '[1, 2]'), ('x-broken', '{\"i\": ');")
        let sqlite = try Spawned(executable: "/usr/bin/sqlite3", [path, script.joined(separator: "\n")])
        #expect(try sqlite.wait() == 0, "\(sqlite.stderr)")

        #expect(try runTandem(["check", path]).status == 0, "the quick check reads no rows")
        let full = try runTandem(["check", path, "--full"])
        #expect(full.status == 1)
        for (column, ids) in expected {
            if let first = ids.refused.first {
                #expect(
                    full.stdout.contains("t.\(column) is") && full.stdout.contains("\(ids.refused.count) stored value") && full.stdout.contains("row '\(first)'"),
                    "\(column): \(full.stdout)")
            }
            if !ids.converted.isEmpty {
                #expect(
                    full.stdout.contains("t.\(column): \(ids.converted.count == 1 ? "1 stored value is" : "\(ids.converted.count) stored values are") not stored as"),
                    "\(column): \(full.stdout)")
            }
        }
        #expect(full.stdout.contains("JSON that is not an object ('x-array')") && full.stdout.contains("malformed JSON") && full.stdout.contains("('x-broken')"), "\(full.stdout)")
        #expect(!expected.values.allSatisfy { $0.converted.isEmpty } && !expected.values.allSatisfy { $0.refused.isEmpty })

        // init stores the convertible values as writes would; the rest stay named.
        let file = dir.path("schema.json")
        try Self.schema.jsonData().write(to: URL(fileURLWithPath: file))
        let repaired = try runTandem(["init", path, "--schema", file])
        #expect(repaired.status == 0 && repaired.stdout.contains("repaired: t."), "\(repaired.stdout) \(repaired.stderr)")
        let after = try runTandem(["check", path, "--full"])
        #expect(!after.stdout.contains("not stored as"), "\(after.stdout)")
        #expect(after.stdout.contains("does not convert") || after.stdout.contains("do not convert"), "\(after.stdout)")
        let db = try SharedDatabase(path: path)
        for (column, ids) in expected {
            let type = Self.schema.tables[0].columns.first { $0.name == column }!.type
            for id in ids.converted {
                let stored = try db.fetchAll("SELECT json_type(data, '$.\(column)') FROM ps_data__t WHERE id = ?", [id]).first?[0].stringValue
                #expect(stored == type.rawValue, "\(column) of \(id) is stored as \(stored ?? "nil")")
            }
        }
    }
}
