import Foundation
import Testing
@testable import Tandem

/// The typed-storage prototype that the layout benchmark measures keeps the data promise as the
/// JSON layout does: the same values read back through the view, to the bit, the same CRUD
/// entries queued, the same values refused.
@Suite struct TypedLayoutPrototypeTests {
    static let schema = Schema(tables: [
        TableSchema(name: "items", columns: [.integer("n"), .real("x"), .text("t")], indexes: [IndexSchema(name: "by_n", columns: ["n"])])
    ])

    /// Adversarial values for each column, as SQL arguments; some convert by the write rules.
    static let ints: [DatabaseValue] = [.integer(.min), .integer(.max), .integer(0), .integer(-1), .real(2.0), .real(-0.0), .text("12"), .text(" 7"), .null]
    static let reals: [DatabaseValue] = [
        .real(-0.0), .real(0.0), .real(2.0), .real(0.1), .real(1.0 / 3.0), .real(123_456_789.123_456_78), .real(.leastNonzeroMagnitude),
        .real(.greatestFiniteMagnitude), .real(-.greatestFiniteMagnitude), .integer(3), .integer(1 << 53), .text("2.5"), .text("1e3"), .null,
    ]
    static let texts: [DatabaseValue] = [
        .text(""), .text("a\u{0}b"), .text("\u{1}\u{1F}\u{7F}"), .text("{\"a\": [1, 2.0]}"), .text("null"), .text("é e\u{301} 日本 🇸🇪"),
        .text("'; DROP TABLE items; --"), .integer(42), .real(2.5), .real(-0.0), .null,
    ]

    func rows(_ db: SharedDatabase) throws -> [[String]] {
        try db.fetchAll("SELECT id, typeof(n), n, typeof(x), hex(x), quote(x), typeof(t), hex(t) FROM items ORDER BY id").map { row in
            row.values.map { "\($0)" }
        }
    }

    @Test func theSameValuesReadBackAndQueueAsInTheJSONLayout() throws {
        let dir = try TemporaryDirectory()
        let json = try SharedDatabase(path: dir.path("json.db"), schema: Self.schema)
        let typed = try SharedDatabase(path: dir.path("typed.db"), schema: Self.schema)
        try typed.write { try TypedLayoutPrototype.install(table: "items", in: $0) }
        var random = SeededRandom(seed: 0x7e9ed)
        var refusals: [String: [Bool]] = [:]
        for index in 0..<300 {
            let values = [Self.ints.randomElement(using: &random)!, Self.reals.randomElement(using: &random)!, Self.texts.randomElement(using: &random)!]
            for db in [json, typed] {
                let refused = (try? db.execute("INSERT INTO items(id, n, x, t) VALUES (?, ?, ?, ?)", [String(format: "i%03d", index)] + values)) == nil
                refusals["\(index)", default: []].append(refused)
            }
        }
        // Values the rules refuse, refused by both.
        for db in [json, typed] {
            #expect(throws: (any Error).self) { try db.execute("INSERT INTO items(id, n) VALUES ('bad', 'abc')") }
            #expect(throws: (any Error).self) { try db.execute("INSERT INTO items(id, x) VALUES ('bad', X'00')") }
            #expect(throws: (any Error).self) { try db.execute("INSERT INTO items(id, n) VALUES ('bad', 2.5)") }
        }
        #expect(refusals.values.allSatisfy { $0[0] == $0[1] })
        let stored = try rows(json)
        #expect(stored.count > 250)
        #expect(try rows(typed) == stored)
        // -0.0 keeps its sign, 2.0 stays a real.
        #expect(
            try typed.fetchAll("SELECT count(*) FROM items WHERE x = 0 AND atan2(x, -1) < 0")[0][0]
                == json.fetchAll("SELECT count(*) FROM items WHERE x = 0 AND atan2(x, -1) < 0")[0][0])
        // The entries' JSON text as queued, byte for byte.
        let entries = { (db: SharedDatabase) in try db.read { tx in try tx.fetchAll("SELECT data FROM ps_crud ORDER BY id").map { $0[0] } } }
        #expect(try entries(typed) == entries(json))
        #expect(try entries(typed).count == stored.count)
    }

    @Test func theTestSupportCommandInstallsIt() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("t.db")
        _ = try SharedDatabase(path: path, schema: Self.schema)
        let process = try Spawned(testSupport: ["typed-layout", path, "items"])
        #expect(try process.wait() == 0, "\(process.stderr)")
        let db = try SharedDatabase(path: path)
        try db.execute("INSERT INTO items(id, n, x, t) VALUES ('a', 1, -0.0, 'x')")
        #expect(try db.fetchAll("SELECT sql FROM sqlite_master WHERE name = 'ps_data__items'")[0][0].stringValue?.contains("\"x\"") == true)
        let row = try db.fetchAll("SELECT atan2(x, -1) < 0, typeof(x) FROM items")[0].values
        #expect(row == [.integer(1), .text("real")], "-0.0 as stored: \(row)")
        let refused = try Spawned(testSupport: ["typed-layout", path, "items"])
        #expect(try refused.wait() == 1 && refused.stderr.contains("holds rows"), "\(refused.stderr)")
    }
}
