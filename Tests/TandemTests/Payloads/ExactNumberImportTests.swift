import Foundation
import Testing
@testable import Tandem

/// A JSON number that no column stores exactly (past ±1.8e308, or an integer beyond 64 bits
/// that a real would round) is refused, naming the element and the key, and nothing is
/// written: through `tandem import` (array and NDJSON) and `exec --args-json`, for every column
/// type. Numbers at the edges that do fit are stored exactly.
@Suite struct ExactNumberImportTests {
    static let schema = Schema(tables: [TableSchema(name: "t", columns: [.text("s"), .integer("i"), .real("r")])])

    /// Generated numbers past what any column holds exactly.
    static let unfitting: [String] = {
        var numbers = ["1e400", "-1e400", "1E309", "2.5e99999", "-0.1e310"]
        // Integers beyond 64 bits whose nearest double differs: 2^64 + 1, 2^63 + 1, -(2^63) - 1, …
        numbers += ["18446744073709551617", "9223372036854775809", "-9223372036854775809", "123456789012345678901234567890"]
        for digits in stride(from: 20, through: 60, by: 8) { numbers.append("1" + String(repeating: "0", count: digits - 2) + "1") }
        return numbers
    }()

    /// The edges that fit a real column exactly: -2^63, 2^63 and 2^64 (doubles exactly), the
    /// largest finite double. (2^63 - 1 does not: the column refuses it, as it always did.)
    static let fittingReals = ["-9223372036854775808", "9223372036854775808", "18446744073709551616", "1.7976931348623157e308", "-1.7976931348623157e308"]

    @Test func importRefusesNumbersNoColumnHoldsExactly() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: Self.schema)
        try db.execute("INSERT INTO t(id, s) VALUES ('kept', 'x')")
        for number in Self.unfitting {
            for column in ["s", "i", "r"] {
                let array = dir.path("p.json")
                try #"[{"id":"a","s":"ok"},{"id":"b","\#(column)":\#(number)}]"#.write(toFile: array, atomically: true, encoding: .utf8)
                let ndjson = dir.path("p.ndjson")
                try #"{"id":"a","s":"ok"}"#.appending("\n{\"id\":\"b\",\"\(column)\":\(number)}\n").write(toFile: ndjson, atomically: true, encoding: .utf8)
                for (arguments, element) in [([array], "element [1]"), ([ndjson, "--ndjson"], "element [1] (line 2)")] {
                    let result = try tandem(["import", db.path, "t"] + arguments)
                    let said = "\(number) into \(column) \(arguments): \(result.stderr)"
                    #expect(result.status == 1, "\(said)")
                    #expect(result.stderr.contains("\(element), key '\(column)'") && result.stderr.contains(number.prefix(20)), "\(said)")
                    #expect(!result.stderr.contains("invalid JSON") && !result.stderr.contains("null"), "\(said)")
                }
            }
            let exec = try tandem(["exec", db.path, "INSERT INTO t(id, r) VALUES ('c', ?)", "--args-json", "[\(number)]"])
            #expect(exec.status != 0 && exec.stderr.contains("element [0]") && exec.stderr.contains(number.prefix(20)), "--args-json [\(number)]: \(exec.stderr)")
        }
        #expect(try db.fetchAll("SELECT id FROM t").map { $0[0].stringValue } == ["kept"], "nothing was written")
    }

    @Test func numbersAtTheEdgesAreStoredExactly() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: Self.schema)
        let payload = dir.path("p.json")
        let elements = Self.fittingReals.enumerated().map { #"{"id":"r\#($0.offset)","r":\#($0.element)}"# }
        try ("[" + elements.joined(separator: ",") + "]").write(toFile: payload, atomically: true, encoding: .utf8)
        let result = try tandem(["import", db.path, "t", payload])
        #expect(result.status == 0, "\(result.stderr)")
        for (index, number) in Self.fittingReals.enumerated() {
            #expect(try db.fetchAll("SELECT r FROM t WHERE id = ?", ["r\(index)"]).first?[0] == .real(Double(number)!), "\(number)")
        }
        // Int64's ends go into an integer column exactly; one past them does not fit it.
        let integers = dir.path("i.ndjson")
        try #"{"id":"max","i":9223372036854775807}"#.appending("\n" + #"{"id":"min","i":-9223372036854775808}"#).write(toFile: integers, atomically: true, encoding: .utf8)
        #expect(try tandem(["import", db.path, "t", integers, "--ndjson"]).status == 0)
        #expect(try db.fetchAll("SELECT i FROM t WHERE id IN ('max', 'min') ORDER BY id").map { $0[0] } == [.integer(.max), .integer(.min)])
        for past in ["9223372036854775808", "-9223372036854775809"] {
            try #"[{"id":"past","i":\#(past)}]"#.write(toFile: payload, atomically: true, encoding: .utf8)
            let refused = try tandem(["import", db.path, "t", payload])
            #expect(refused.status == 1 && refused.stderr.contains("element [0], key 'i'"), "\(past): \(refused.stderr)")
        }
        for (index, number) in ["9223372036854775807", "-9223372036854775808"].enumerated() {
            let exec = try tandem(["exec", db.path, "INSERT INTO t(id, i) VALUES (?, ?)", "--args-json", "[\"i\(index)\", \(number)]"])
            #expect(exec.status == 0, "\(exec.stderr)")
            #expect(try db.fetchAll("SELECT i FROM t WHERE id = ?", ["i\(index)"]).first?[0] == .integer(Int64(number)!))
        }
    }
}
