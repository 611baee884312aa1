import Foundation
import Testing
@testable import Tandem

/// A column declared with another type keeps its stored values and reads them as the new type:
/// the upgrade names every stored value that does not convert exactly (the column's write rule,
/// ``ColumnRule``, as the oracle), for every pair of types, through the library and `tandem init`.
@Suite struct RetypedColumnTests {
    static let values: [DatabaseValue] = [
        .integer(.max), .integer(.min), .integer(9_007_199_254_740_993), .integer(-1), .integer(0),
        .real(2.5), .real(-0.0), .real(2.0), .real(1e300), .real(0.1), .real(9_007_199_254_740_992),
        .text("abc"), .text("12"), .text("2.5"), .text("-0.0"), .text("9007199254740993"), .text(" 7 "), .text("1e400"), .text(""),
        .text("a\u{0}b"), .text("{\"json\": 1}"), .null,
    ]

    private func schema(_ type: ColumnSchema.ColumnType) -> Schema {
        Schema(tables: [TableSchema(name: "t", columns: [ColumnSchema(name: "v", type: type)])])
    }

    @Test(arguments: [ColumnSchema.ColumnType.integer, .real, .text])
    func everyInexactValueIsNamed(from: ColumnSchema.ColumnType) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try SharedDatabase(path: path, schema: schema(from))
        var stored: [(id: String, value: DatabaseValue)] = []
        for (index, value) in Self.values.enumerated() {
            guard let kept = ColumnRule.stored(value, in: from) else { continue }
            let id = String(format: "r%02d", index)
            try db.execute("INSERT INTO t(id, v) VALUES (?, ?)", [id, value])
            stored.append((id, kept))
        }
        for to in [ColumnSchema.ColumnType.integer, .real, .text] where to != from {
            let expected = stored.filter { ColumnRule.stored($0.value, in: to) == nil }.map(\.id)
            let effects = try db.upgrade(to: schema(to)).effects
            let inexact = effects.compactMap { effect -> (Int, [String])? in
                guard case .valuesReadInexactly(let table, let column, let type, let rows, let examples) = effect, table == "t", column == "v", type == to else { return nil }
                return (rows, examples)
            }.first
            #expect((inexact?.0 ?? 0) == expected.count, "\(from) → \(to): \(inexact.map { "\($0)" } ?? "none") for \(expected)")
            let named = inexact?.1.compactMap { $0.split(separator: "'").dropFirst().first.map(String.init) } ?? []
            #expect(named == Array(expected.prefix(InexactValues.examples)), "\(from) → \(to): \(named) for \(expected)")
        }
        // The command line says it too, naming the rows.
        let to: ColumnSchema.ColumnType = from == .integer ? .real : .integer
        let expected = stored.filter { ColumnRule.stored($0.value, in: to) == nil }.map(\.id)
        #expect(!expected.isEmpty, "\(from) → \(to) has values that do not convert")
        let file = dir.path("schema.json")
        try schema(to).jsonData().write(to: URL(fileURLWithPath: file))
        let result = try runTandem(["init", path, "--schema", file])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("t.v: \(expected.count) stored value") && result.stdout.contains("row '\(expected.first ?? "")'"), "\(result.stdout)")
    }
}
