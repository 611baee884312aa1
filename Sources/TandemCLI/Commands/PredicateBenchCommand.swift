import Foundation
import Tandem

/// Typed predicates against the plain indexed SQL a programmer would write for the same rows,
/// for `Tools/bench/predicates`. Uses the public API only, so that it builds against any
/// version of Tandem with records.
enum PredicateBenchCommand {
    static let command = CommandLineTool.Command(
        name: "predicate-bench", summary: "(internal) typed predicates against plain indexed SQL",
        usage: """
            Usage: tandem predicate-bench DB [--rows N] [--repeats K]

            Creates DB (which must not exist) with N records (default 100000) of the table
            bench_item (title, count, at, tags, size; title, count and at indexed), then runs each
            query K times (default 15), the plain SQL, the typed ids and the typed fetch in turn,
            and prints one JSON object per query: {"name", "rows", "plain_us", "ids_us",
            "fetch_us"} (medians, microseconds). The rows each way selects are compared first.

            """, syntax: Arguments.Syntax(options: ["rows", "repeats"]), hidden: true, run: run)

    /// Sizes in declaration order, which is not their raw values' order.
    enum BenchSize: String, Codable, CaseIterable, Comparable, Sendable {
        case small = "s", medium = "m", large = "l"
        static func < (a: BenchSize, b: BenchSize) -> Bool { allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)! }
    }

    struct BenchItem: Record {
        var id = ""
        var title: String
        var count: Int
        var at: Date
        var tags: [String]
        var size: BenchSize
    }

    struct Query {
        let name: String
        let typed: RecordQuery<BenchItem>
        let sql: String
        let arguments: [DatabaseValue]
    }

    static let base = 1_700_000_000.0

    static func queries() -> [Query] {
        let ascii = "item-004242", accented = "é-004243", decomposed = "e\u{301}-004244", prefix = "item-0042", part = "-0042"
        let date = Date(timeIntervalSince1970: base + 4242 * 0.37), tags = ["t7"]
        let low = -1, high = 10, large = BenchSize.large
        return [
            Query(
                name: "title == ASCII", typed: RecordQuery(#Predicate { $0.title == ascii }),
                sql: "SELECT * FROM bench_item WHERE title = ?", arguments: [.text(ascii)]),
            Query(
                name: "title == non-ASCII", typed: RecordQuery(#Predicate { $0.title == accented }),
                sql: "SELECT * FROM bench_item WHERE title = ?", arguments: [.text(accented)]),
            Query(
                name: "title == NFD", typed: RecordQuery(#Predicate { $0.title == decomposed }),
                sql: "SELECT * FROM bench_item WHERE title = ?", arguments: [.text(decomposed)]),
            Query(
                name: "title < ASCII", typed: RecordQuery(#Predicate { $0.title < "item-000100" }),
                sql: "SELECT * FROM bench_item WHERE title < ? ORDER BY id", arguments: [.text("item-000100")]),
            Query(
                name: "title starts with", typed: RecordQuery(#Predicate { $0.title.starts(with: prefix) }),
                sql: "SELECT * FROM bench_item WHERE title >= ? AND title < ? ORDER BY id", arguments: [.text(prefix), .text(prefix + "\u{10FFFF}")]),
            Query(
                name: "title contains", typed: RecordQuery(#Predicate { $0.title.contains(part) }),
                sql: "SELECT * FROM bench_item WHERE instr(title, ?) > 0", arguments: [.text(part)]),
            Query(
                name: "at == date", typed: RecordQuery(#Predicate { $0.at == date }),
                sql: "SELECT * FROM bench_item WHERE at = ?", arguments: [.real(date.timeIntervalSince1970)]),
            Query(
                name: "at < date", typed: RecordQuery(#Predicate { $0.at < date }),
                sql: "SELECT * FROM bench_item WHERE at < ? ORDER BY id", arguments: [.real(date.timeIntervalSince1970)]),
            Query(
                name: "count in range", typed: RecordQuery(#Predicate { $0.count > low && $0.count < high }),
                sql: "SELECT * FROM bench_item WHERE count > ? AND count < ? ORDER BY id", arguments: [.integer(Int64(low)), .integer(Int64(high))]),
            Query(
                name: "tags == JSON", typed: RecordQuery(#Predicate { $0.tags == tags }),
                sql: "SELECT * FROM bench_item WHERE tags = ?", arguments: [.text("[\"t7\"]")]),
            Query(
                name: "size < .large (own order)", typed: RecordQuery(#Predicate { $0.size < large }),
                sql: "SELECT * FROM bench_item WHERE size IN ('s', 'm') ORDER BY id", arguments: []),
            Query(
                name: "sort by title, 20", typed: RecordQuery(sortBy: [SortDescriptor(\.title)], limit: 20),
                sql: "SELECT * FROM bench_item ORDER BY title, id LIMIT 20", arguments: []),
            Query(
                name: "sort by at, 20", typed: RecordQuery(sortBy: [SortDescriptor(\.at)], limit: 20),
                sql: "SELECT * FROM bench_item ORDER BY at, id LIMIT 20", arguments: []),
        ]
    }

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"])
        let rows = try args.integer("rows", default: 100_000, range: 1...10_000_000)
        let repeats = try args.integer("repeats", default: 15, range: 1...10_000)
        let path = args.positionals[0]
        guard !FileManager.default.fileExists(atPath: path) else { throw TandemError.invalidArguments("\(path) exists; predicate-bench creates its database") }
        let schema = try Schema(records: [
            RecordTable(
                BenchItem.self,
                indexes: [
                    IndexSchema(name: "by_title", columns: ["title"]), IndexSchema(name: "by_count", columns: ["count"]), IndexSchema(name: "by_at", columns: ["at"]),
                ])
        ])
        let db = try SharedDatabase(path: path, schema: schema)
        try db.write { tx in
            try tx.insert(
                contentsOf: (0..<rows).map { i in
                    let title = i % 10 == 3 ? String(format: "é-%06d", i) : i % 10 == 4 ? String(format: "e\u{301}-%06d", i) : String(format: "item-%06d", i)
                    return BenchItem(
                        id: String(format: "b%07d", i), title: title, count: i % 1000, at: Date(timeIntervalSince1970: base + Double(i) * 0.37), tags: ["t\(i % 50)"],
                        size: BenchSize.allCases[i % 3])
                })
        }
        for query in queries() {
            let typedIDs = try db.ids(query.typed)
            let plainIDs = try db.fetchAll(query.sql, query.arguments).compactMap { $0["id"]?.stringValue }
            var plain: [Double] = [], ids: [Double] = [], fetch: [Double] = []
            for _ in 0..<repeats {
                plain.append(try time { try db.fetchAll(query.sql, query.arguments).count })
                ids.append(try time { try db.ids(query.typed).count })
                fetch.append(try time { try db.fetch(query.typed).count })
            }
            let line: [String: Any] = [
                "name": query.name, "rows": typedIDs.count, "plain_rows": plainIDs.count, "plain_us": median(plain),
                "ids_us": median(ids), "fetch_us": median(fetch),
            ]
            let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
            Output.write(String(decoding: data, as: UTF8.self) + "\n")
        }
        return 0
    }

    private static func time(_ body: () throws -> Int) throws -> Double {
        let start = ContinuousClock.now
        _ = try body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
