import Foundation
import Tandem

/// A writer process for `tandem stress` and the tests: numbered write transactions into `stress`.
enum StressWriterCommand {
    static let command = CommandLineTool.Command(
        name: "stress-writer", summary: "(internal) numbered writer for stress tests",
        usage: """
            Usage: tandem stress-writer DB --writer W --transactions M [--rows-per-transaction R] [--interval-us U]
                                        [--synchronous normal|full] [--write-lock-streak N] [--check-reads N]
                   tandem stress-writer DB --bulk [--direct] --rows-per-transaction R

            Runs write transactions numbered from the first not yet in DB up to M-1, each inserting
            R rows (default 1) into the table `stress` with ids "w<W>-t<i>-r<j>". After each commit
            prints "<i> <start_us> <commit_us>" (CLOCK_MONOTONIC microseconds: before waiting for the
            write lock, and after COMMIT returned). With --interval-us, transaction i starts no
            earlier than U × i µs after the start: TANDEM_START_AT_US (a CLOCK_MONOTONIC instant in µs
            that the first transaction waits for), or now. --write-lock-streak sets
            Configuration.writeLockStreakLimit (default 4). --check-reads N (the number of writers)
            reads after each commit its own rows back and every writer's highest transaction, and
            prints "violation <property> <detail>" when its rows are not all there
            (read-your-writes) or a writer's highest transaction went back since an earlier read of
            this process (monotonic-reads).
            --bulk inserts R rows in one transaction and prints "<rows> <microseconds>": with
            tx.execute of an INSERT per row, or with --direct through tx.insert(into:columns:rows:).

            """,
        syntax: Arguments.Syntax(
            flags: ["bulk", "direct"], options: ["writer", "transactions", "rows-per-transaction", "interval-us", "synchronous", "write-lock-streak", "check-reads"]), hidden: true,
        run: run)

    static let schema = Schema(tables: [
        TableSchema(
            name: "stress", columns: [.integer("writer"), .integer("txn"), .integer("row"), .text("payload"), .integer("written_at")],
            indexes: [IndexSchema(name: "by_writer", columns: ["writer", "txn"])])
    ])

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"])
        let writer = try args.integer("writer", default: 0, range: 0...100_000)
        let transactions = try args.integer("transactions", default: 100, range: 0...100_000_000)
        let rows = try args.integer("rows-per-transaction", default: 1, range: 1...100_000_000)
        let interval = Int64(try args.integer("interval-us", default: 0, range: 0...60_000_000))
        let streak = try args.integer("write-lock-streak", default: Configuration().writeLockStreakLimit, range: 1...1_000_000)
        let db = try openDatabase(args.positionals[0], synchronous: try synchronous(args)) { $0.writeLockStreakLimit = streak }
        if args.has("bulk") { return try bulk(db, rows: rows, direct: args.has("direct")) }
        let checkedWriters = args.options["check-reads"] != nil ? try args.integer("check-reads", default: 1, range: 1...100_000) : nil
        var reads = ReadHistory(writer: writer, rows: rows)
        let startAt = ProcessInfo.processInfo.environment["TANDEM_START_AT_US"].flatMap { Int64($0) }
        let startedAt = startAt ?? monotonicMicroseconds()
        let first = try db.read {
            try $0.scalar("SELECT coalesce(max(txn), -1) + 1 FROM stress WHERE writer = ?", [writer]).int64Value ?? 0
        }
        let payload = String(repeating: "x", count: 32)
        var index = Int(first)
        if let startAt, case let wait = startAt - monotonicMicroseconds(), wait > 0 { usleep(useconds_t(wait)) }
        while index < transactions {
            if interval > 0 {
                let wait = startedAt + Int64(index) * interval - monotonicMicroseconds()
                if wait > 0 { usleep(useconds_t(wait)) }
            }
            let start = monotonicMicroseconds()
            try db.write { tx in
                for row in 0..<rows {
                    try tx.execute(
                        "INSERT INTO stress(id, writer, txn, row, payload, written_at) VALUES (?, ?, ?, ?, ?, ?)",
                        ["w\(writer)-t\(index)-r\(row)", writer, index, row, payload, start])
                }
            }
            Output.write("\(index) \(start) \(monotonicMicroseconds())\n")
            if let checkedWriters {
                for violation in try reads.check(after: index, in: db, writers: checkedWriters) { Output.write("violation \(violation)\n") }
            }
            index += 1
        }
        return 0
    }

    /// What one writer process read after its commits: its own rows (read-your-writes) and every
    /// writer's highest transaction, which must never go back (monotonic reads).
    struct ReadHistory {
        let writer: Int
        let rows: Int
        var highest: [Int64: Int64] = [:]

        mutating func check(after txn: Int, in db: SharedDatabase, writers: Int) throws -> [String] {
            let (own, maxima) = try db.read { tx in
                (
                    try tx.scalar("SELECT count(*) FROM stress WHERE writer = ? AND txn = ?", [writer, txn]).int64Value ?? 0,
                    try tx.fetchAll(StressRun.watchSQL(writers: writers))
                )
            }
            var violations: [String] = []
            if own != rows {
                violations.append("read-your-writes writer \(writer) read \(own) of the \(rows) row(s) of its transaction \(txn) after its commit")
            }
            for row in maxima {
                guard let other = row[0].int64Value, let seen = row[1].int64Value else { continue }
                if let before = highest[other], seen < before {
                    violations.append("monotonic-reads writer \(writer) read writer \(other)'s highest transaction \(seen) after reading \(before)")
                }
                highest[other] = max(highest[other] ?? seen, seen)
            }
            return violations
        }
    }

    /// One write transaction of `rows` rows through the view (triggers, CRUD capture,
    /// bookkeeping), or through the direct bulk insert.
    static func bulk(_ db: SharedDatabase, rows: Int, direct: Bool) throws -> Int32 {
        let payload = String(repeating: "x", count: 32)
        let start = monotonicMicroseconds()
        try db.write { tx in
            if direct {
                let values = (0..<rows).lazy.map { row -> [DatabaseValue] in
                    [.text("w0-t\(row)-r0"), .integer(0), .integer(Int64(row)), .integer(0), .text(payload), .integer(start)]
                }
                try tx.insert(into: "stress", columns: ["id", "writer", "txn", "row", "payload", "written_at"], rows: values)
                return
            }
            for row in 0..<rows {
                try tx.execute(
                    "INSERT INTO stress(id, writer, txn, row, payload, written_at) VALUES (?, ?, ?, ?, ?, ?)",
                    ["w0-t\(row)-r0", 0, row, 0, payload, start])
            }
        }
        Output.write("\(rows) \(monotonicMicroseconds() - start)\n")
        return 0
    }
}
