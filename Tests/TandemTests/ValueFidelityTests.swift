import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

@Suite struct ValueFidelityTests {
    static let schema = """
        {"tables":[{"name":"v","columns":[{"name":"t","type":"text"},{"name":"i","type":"integer"},{"name":"r","type":"real"},{"name":"x","type":"text"}]}]}
        """

    /// Every adversarial value, written by a `tandem exec` process into each column, reads back
    /// identically on the writer before and after sync and on another client; values written
    /// into the column of their own kind read back exactly as written.
    @Test func valuesReadBackIdenticallyEverywhereBeforeAndAfterSync() throws {
        let dir = try TemporaryDirectory()
        let schemaFile = dir.path("schema.json")
        try Self.schema.write(toFile: schemaFile, atomically: true, encoding: .utf8)
        let a = dir.path("a.db"), b = dir.path("b.db"), server = "sqlite:" + dir.path("server.db")
        for db in [a, b] { #expect(try runTandem(["init", db, "--schema", schemaFile]).status == 0) }
        for (index, value) in adversarialValues.enumerated() {
            let args = JSONValue.array([.string("r\(index)"), value, value, value, value]).jsonText
            let result = try runTandem(["exec", a, "INSERT INTO v(id, t, i, r, x) VALUES (?, ?, ?, ?, ?)", "--args-json", args])
            #expect(result.status == 0, "\(value): \(result.stderr)")
            // The same value through an UPDATE (a PATCH entry) of a row that held other values.
            let update = try runTandem(["exec", a, "INSERT INTO v(id, t, i, r, x) VALUES (?, 'x', 1, 1.5, 'y'); UPDATE v SET t = ?1, i = ?1, r = ?1, x = ?1 WHERE id = ?2",
                                        "--args-json", JSONValue.array([.string("u\(index)"), value, .string("u\(index)")]).jsonText])
            #expect(update.status == 0, "\(value): \(update.stderr)")
        }
        let query = "SELECT id, t, i, r, x FROM v ORDER BY id"
        func snapshot(_ path: String) throws -> [[String]] {
            try SharedDatabase(path: path).fetchAll(query).map { $0.values.map(exact) }
        }
        let before = try snapshot(a)
        #expect(before.count == 2 * adversarialValues.count)
        // The column of the value's own kind holds it exactly.
        let rows = try SharedDatabase(path: a).fetchAll(query)
        for (index, value) in adversarialValues.enumerated() {
            for prefix in ["r", "u"] {
            let row = try #require(rows.first { $0[0] == .text("\(prefix)\(index)") })
            switch value {
            case .string: #expect(exact(row[1]) == exact(value.databaseValue), "text column")
            case .integer: #expect(exact(row[2]) == exact(value.databaseValue), "integer column")
            case .double(let d):
                // An UPDATE through a view hands the trigger its new values with the column's
                // affinity applied, and SQLite's REAL affinity stores -0.0 as 0 (as in any plain
                // SQLite REAL column); an INSERT keeps the sign.
                let expected: DatabaseValue = prefix == "u" && d == 0 ? .real(0.0) : value.databaseValue
                #expect(exact(row[3]) == exact(expected), "real column")
            default: #expect(row[1] == .null && row[2] == .null && row[3] == .null)
            }
            }
        }
        #expect(try runTandem(["sync", a, "--backend", server]).status == 0)
        #expect(try runTandem(["sync", b, "--backend", server]).status == 0)
        let afterA = try snapshot(a), onB = try snapshot(b)
        for (index, row) in before.enumerated() {
            #expect(afterA[index] == row, "writer after sync")
            #expect(onB[index] == row, "other client")
        }
    }

    /// JSON text keeps each number's kind both ways.
    @Test func jsonValuesKeepTheirKind() throws {
        for value in adversarialValues + [.bool(true), .array([.double(2.0), .integer(2)]), .object(["a": .double(-0.0)])] {
            let text = JSONValue.array([value]).jsonText
            let parsed = try JSONValue(parsing: text)
            #expect(parsed.jsonText == text)
            if case .array(let values) = parsed, case .double(let d) = values[0], case .double(let original) = value {
                #expect(d.bitPattern == original.bitPattern)
            }
        }
        #expect(try JSONValue(parsing: "2.0") == .double(2.0))
        #expect(try JSONValue(parsing: "2") == .integer(2))
        #expect(try JSONValue(parsing: "-9223372036854775808") == .integer(.min))
        #expect(try JSONValue(parsing: "18446744073709551615") == .double(18446744073709551615.0))
    }
}
