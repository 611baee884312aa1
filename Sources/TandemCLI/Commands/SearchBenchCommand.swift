import Foundation
import Tandem

/// Searches timed in one process, for the benchmark's figures: Tandem's `search` beside the same
/// MATCH on a plain FTS5 table of the same rows in the same file, read through the same API.
enum SearchBenchCommand {
    static let command = CommandLineTool.Command(
        name: "search-bench", summary: "(internal) time searches against the same MATCH on a plain table",
        usage: """
            Usage: tandem-test-support search-bench DB TABLE PLAIN_TABLE PLAIN_FTS --limit N < QUERIES

            For each line of standard input (a query of words), runs `search(TABLE, matching:,
            limit: N)` and `fetchAll` of the same words' MATCH on PLAIN_FTS joined to PLAIN_TABLE
            (by rowid, ordered by bm25, LIMIT N), alternating which goes first; prints "tandem µs
            rows plain µs rows" per query.

            """, syntax: Arguments.Syntax(options: ["limit"]), hidden: true, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB", "TABLE", "PLAIN_TABLE", "PLAIN_FTS"])
        let limit = try args.integer("limit", default: 20, range: 1...10_000)
        let (table, plainTable, plainFTS) = (args.positionals[1], args.positionals[2], args.positionals[3])
        let db = try openDatabase(args.positionals[0], readOnly: true)
        let plain = """
            SELECT p.*, bm25(\(plainFTS)) AS search_rank FROM \(plainFTS) JOIN \(plainTable) AS p ON p.rowid = \(plainFTS).rowid \
            WHERE \(plainFTS) MATCH ? ORDER BY search_rank, p.id LIMIT \(limit)
            """
        var first = true
        while let line = readLine() {
            let words = line.split(separator: " ").map { "\"\($0)\"" }.joined(separator: " ")
            var tandem = (0 as Int64, 0), other = (0 as Int64, 0)
            for side in first ? [0, 1] : [1, 0] {
                let start = monotonicMicroseconds()
                let count = try side == 0 ? db.search(table, matching: line, limit: limit).count : db.fetchAll(plain, [words]).count
                let took = monotonicMicroseconds() - start
                if side == 0 { tandem = (took, count) } else { other = (took, count) }
            }
            first.toggle()
            Output.write("\(tandem.0) \(tandem.1) \(other.0) \(other.1)\n")
        }
        return 0
    }
}
