import Foundation
import Testing
@testable import Tandem

/// Import's change detection keeps every distinction the data promise makes: re-importing a row
/// with one value changed to another (by bits for reals, -0.0 against 0.0 included; by bytes for
/// text, canonically equivalent spellings included) queues exactly that column's PATCH, and
/// re-importing the same value queues nothing. Every ordered pair of the adversarial values of
/// each column type.
@Suite struct ImportChangeDetectionTests {
    static let schema = Schema(tables: [TableSchema(name: "t", columns: [.integer("i"), .real("r"), .text("s")])])

    static let values: [String: [JSONValue]] = [
        "i": [.null, .integer(.min), .integer(.max), .integer(0), .integer(-1), .integer(9_007_199_254_740_993)],
        "r": [
            .null, .double(0.0), .double(-0.0), .double(2.0), .double(0.1), .double(0.30000000000000004), .double(1e300),
            .double(.leastNonzeroMagnitude), .double(-.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude),
        ],
        "s": [
            .null, .string(""), .string("a"), .string("2.0"), .string("-0.0"), .string("null"), .string("{\"a\": 1}"), .string("a\u{0}b"),
            .string("\u{1}\u{1f}\u{7f}"), .string("é"), .string("e\u{301}"), .string("\u{212B}"), .string("Å"),
        ],
    ]

    /// Equal as the data promise counts equality: reals by bits, text by bytes.
    static func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.integer(let x), .integer(let y)): x == y
        case (.double(let x), .double(let y)): x.bitPattern == y.bitPattern
        case (.string(let x), .string(let y)): Array(x.utf8) == Array(y.utf8)
        default: false
        }
    }

    @Test(arguments: ["i", "r", "s"]) func everyChangeQueuesExactlyItsPatch(column: String) throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: Self.schema)
        let values = Self.values[column]!
        var row = 0
        for before in values {
            for after in values {
                row += 1
                let id = "row\(row)"
                func payload(_ value: JSONValue) -> Data { Data(JSONValue.array([.object(["id": .string(id), column: value])]).jsonText.utf8) }
                _ = try db.importJSON(payload(before), into: "t")
                let queued = try db.uploadQueue.pendingCount()
                let result = try db.importJSON(payload(after), into: "t")
                let entries = try db.uploadQueue.transactions(limit: 100_000).flatMap(\.entries).suffix(try db.uploadQueue.pendingCount() - queued)
                let what = "\(column): \(before.jsonText) then \(after.jsonText)"
                if Self.same(before, after) {
                    #expect(entries.isEmpty && result.tables["t"]?.unchanged == 1, "\(what): \(entries.map(\.data))")
                } else {
                    #expect(entries.count == 1 && result.tables["t"]?.updated == 1, "\(what): \(entries.count) entries")
                    guard let entry = entries.first else { continue }
                    #expect(entry.op == .patch && entry.rowID == id, "\(what): \(entry.op)")
                    let sent = entry.data?[column] ?? .null
                    #expect(entry.data?.count == 1 && Self.same(sent, after), "\(what): sent \(entry.data.map { "\($0)" } ?? "nil")")
                }
            }
        }
    }
}
