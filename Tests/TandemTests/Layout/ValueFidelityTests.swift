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
    /// into the column of their own kind read back exactly as written. A column refuses what its
    /// type cannot hold exactly (``ColumnRule``), naming the table, the column and the value.
    @Test func valuesReadBackIdenticallyEverywhereBeforeAndAfterSync() throws {
        let dir = try TemporaryDirectory()
        let schemaFile = dir.path("schema.json")
        try Self.schema.write(toFile: schemaFile, atomically: true, encoding: .utf8)
        let a = dir.path("a.db"), b = dir.path("b.db"), server = "sqlite:" + dir.path("server.db")
        for db in [a, b] { #expect(try tandem(["init", db, "--schema", schemaFile]).status == 0) }
        let columns: [(name: String, type: ColumnSchema.ColumnType)] = [("t", .text), ("i", .integer), ("r", .real), ("x", .text)]
        for (index, value) in adversarialValues.enumerated() {
            // The value in every column that takes it (NULL in the others); each other column refuses it.
            let takes = columns.map { ColumnRule.stored(value.databaseValue, in: $0.type) != nil }
            let given = JSONValue.array([.string("r\(index)")] + takes.map { $0 ? value : .null })
            let result = try tandem(["exec", a, "INSERT INTO v(id, t, i, r, x) VALUES (?, ?, ?, ?, ?)", "--args-json", given.jsonText])
            #expect(result.status == 0, "\(value): \(result.stderr)")
            // The same value through an UPDATE (a PATCH entry) of a row that held other values.
            let sets = columns.indices.filter { takes[$0] }.map { "\(columns[$0].name) = ?1" }
            let update = try runTandem([
                "exec", a, "INSERT INTO v(id, t, i, r, x) VALUES (?, 'x', 1, 1.5, 'y'); UPDATE v SET \((sets.isEmpty ? ["id = id"] : sets).joined(separator: ", ")) WHERE id = ?2",
                "--args-json", JSONValue.array([.string("u\(index)"), value, .string("u\(index)")]).jsonText,
            ])
            #expect(update.status == 0, "\(value): \(update.stderr)")
            for (column, type) in zip(columns, takes) where !type {
                for sql in ["INSERT INTO v(id, \(column.name)) VALUES ('refused', ?)", "UPDATE v SET \(column.name) = ? WHERE id = 'u\(index)'"] {
                    let refused = try tandem(["exec", a, sql, "--args-json", JSONValue.array([value]).jsonText])
                    #expect(refused.status == 1, "\(value) into \(column.name): \(refused.stderr)")
                    #expect(refused.stderr.contains("v.\(column.name)") && !refused.stderr.contains("ps_"), "\(value) into \(column.name): \(refused.stderr)")
                }
            }
        }
        let query = "SELECT id, t, i, r, x FROM v ORDER BY id"
        func snapshot(_ path: String) throws -> [[String]] {
            try SharedDatabase(path: path).fetchAll(query).map { $0.values.map(exact) }
        }
        let before = try snapshot(a)
        #expect(before.count == 2 * adversarialValues.count)
        // The column of the value's own kind holds it exactly, through an INSERT and an UPDATE
        // alike (-0.0 keeps its sign); another column holds what the column's rule makes of it.
        let rows = try SharedDatabase(path: a).fetchAll(query)
        for (index, value) in adversarialValues.enumerated() {
            for prefix in ["r", "u"] {
                let row = try #require(rows.first { $0[0] == .text("\(prefix)\(index)") })
                switch value {
                case .string: #expect(exact(row[1]) == exact(value.databaseValue), "text column")
                case .integer: #expect(exact(row[2]) == exact(value.databaseValue), "integer column")
                case .double: #expect(exact(row[3]) == exact(value.databaseValue), "real column")
                default: #expect(row[1] == .null && row[2] == .null && row[3] == .null)
                }
                for (offset, type) in [ColumnSchema.ColumnType.text, .integer, .real, .text].enumerated() {
                    let unchanged: DatabaseValue = prefix == "u" ? [.text("x"), .integer(1), .real(1.5), .text("y")][offset] : .null
                    let expected = ColumnRule.stored(value.databaseValue, in: type) ?? unchanged
                    #expect(exact(row[offset + 1]) == exact(expected), "\(prefix)\(index) column \(offset + 1)")
                }
            }
        }
        #expect(try tandem(["sync", a, "--backend", server]).status == 0)
        #expect(try tandem(["sync", b, "--backend", server]).status == 0)
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

    /// A JSON number keeps the kind and the value it is written with: a real written with a
    /// fraction or an exponent (as SQLite writes a real, with 15 or 18 digits) stays that real,
    /// even where Foundation's parser reads it as a decimal and loses the fraction.
    @Test func jsonTextIsReadAsWritten() throws {
        var random = SeededRandom(seed: 0x15a)
        var texts = ["-469935638657203.0", "9007199254740992.0", "4.6116860184273879e+18", "9.22337203685477478e+18", "1e400", "-0.0", "0E0"]
        for _ in 0..<2000 {
            let d = Double(bitPattern: random.next())
            guard d.isFinite else { continue }
            texts += [String(format: "%.17g", d), String(format: "%.18g", d)]
            if abs(d) < 1e18 { texts.append(String(format: "%.1f", d.rounded())) }  // an integral real, as SQLite writes one
        }
        for text in texts where text.contains(where: { ".eE".contains($0) }) {
            let expected = try #require(Double(text))
            guard case .double(let parsed) = try JSONValue(parsing: text) else { Issue.record("\(text) is not read as a real"); continue }
            #expect(parsed.bitPattern == expected.bitPattern, "\(text)")
        }
        #expect(
            try JSONValue(parsing: "[9223372036854775807, -9223372036854775808, 9223372036854775808]")
                == .array([.integer(.max), .integer(.min), .double(9223372036854775808.0)]))
        #expect(
            try JSONValue(parsing: #" {"a" : [ "\u00e9\ud83d\ude00\n\"\\\/", true, false, null ] } "#)
                == .object(["a": .array([.string("é😀\n\"\\/"), .bool(true), .bool(false), .null])]))
        for bad in [
            "", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "-", "1e", "\"\\ud800\"", "\"\\udc00x\"", "\"a\u{1}\"", "\"\\x\"",
            "[1] 2", "tru", "nul", "{1:2}", "[" + String(repeating: "[", count: 600) + String(repeating: "]", count: 601),
        ] {
            #expect(throws: TandemError.self, "\(bad.prefix(20))") { try JSONValue(parsing: bad) }
        }
    }
}
