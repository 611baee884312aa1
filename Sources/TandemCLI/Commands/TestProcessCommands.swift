import Foundation
import Tandem

// Commands that tests run as real processes (`tandem-test-support`, not `tandem`).

/// Holds a write transaction for a while (tests of lock waiting).
enum HoldCommand {
    static let command = CommandLineTool.Command(
        name: "hold", summary: "(internal) hold a write transaction",
        usage: """
            Usage: tandem-test-support hold DB --seconds S [--busy-timeout DURATION] [SQL]

            Opens a write transaction, runs SQL if given, prints "locked", holds the transaction
            for S seconds, commits and prints "committed". --busy-timeout (every command's, such
            as 60s or 500ms) sets how long it waits for the write lock (default 5 s).

            """, syntax: Arguments.Syntax(options: ["seconds"]), hidden: true, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"], more: true)
        let seconds = try args.seconds("seconds", default: 1)
        let db = try openDatabase(args.positionals[0]) { $0.busyTimeout = BusyTimeoutOption.given ?? .seconds(5) }
        try db.write { tx in
            if args.positionals.count > 1 { try tx.execute(args.positionals[1]) }
            Output.write("locked\n")
            Thread.sleep(forTimeInterval: seconds)
        }
        Output.write("committed\n")
        return 0
    }
}

/// Read-modify-write of a counter in application code (the lost-update case).
enum CounterCommand {
    static let command = CommandLineTool.Command(
        name: "counter", summary: "(internal) increment a counter by read-then-write",
        usage: """
            Usage: tandem-test-support counter DB --times N

            N write transactions that each read counters.n for id 'c' and write n + 1 in a second
            statement.

            """, syntax: Arguments.Syntax(options: ["times"]), hidden: true, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"])
        let times = try args.integer("times", default: 1, range: 0...1_000_000)
        let db = try openDatabase(args.positionals[0])
        for _ in 0..<times {
            try db.write { tx in
                let n = try tx.scalar("SELECT n FROM counters WHERE id = 'c'").int64Value ?? 0
                try tx.execute("UPDATE counters SET n = ? WHERE id = 'c'", [n + 1])
            }
        }
        return 0
    }
}

/// Opens many files, one per round, each round at its own CLOCK_MONOTONIC instant, so that many
/// processes open each file at one instant (the open-race case) without a process per open.
enum OpenRoundsCommand {
    static let command = CommandLineTool.Command(
        name: "open-rounds", summary: "(internal) open files at given instants",
        usage: """
            Usage: tandem-test-support open-rounds --schema FILE --start-at-us T --interval-us U DB…

            For each DB i, waits until CLOCK_MONOTONIC microsecond T + i × U, opens DB with the
            schema as `tandem init` does, and prints "<i> ok" or "<i> error: …".

            """, syntax: Arguments.Syntax(options: ["schema", "start-at-us", "interval-us"]), hidden: true, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        guard let schemaPath = args.options["schema"] else { throw Arguments.UsageError(message: "missing --schema FILE") }
        let schema = try Schema(contentsOf: URL(fileURLWithPath: schemaPath))
        let start = Int64(try args.integer("start-at-us", default: 0))
        let interval = Int64(try args.integer("interval-us", default: 50_000))
        var failed = false
        for (round, path) in args.positionals.enumerated() {
            let wait = start + Int64(round) * interval - monotonicMicroseconds()
            if wait > 0 { usleep(useconds_t(wait)) }
            do {
                _ = try SharedDatabase(path: path, schema: schema)
                Output.write("\(round) ok\n")
            } catch {
                failed = true
                Output.write("\(round) error: \(error)\n")
            }
        }
        return failed ? 1 : 0
    }
}

/// Bulk loads through the record API and through SQL, for the benchmark's figures.
enum BulkRecordsCommand {
    static let command = CommandLineTool.Command(
        name: "bulk-records", summary: "(internal) time a bulk load of records against SQL",
        usage: """
            Usage: tandem-test-support bulk-records DIR --rows N

            Loads N notes into a new database in DIR twice, each in one write transaction: with
            `insert(contentsOf:)` and with `tx.execute` of the same INSERT per row. Prints
            "records <rows/s>" and "sql <rows/s>" and checks that both queued N CRUD entries.

            """, syntax: Arguments.Syntax(options: ["rows"]), hidden: true, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DIR"])
        let rows = try args.integer("rows", default: 100_000, range: 1...10_000_000)
        let notes = (0..<rows).map { DemoNote(id: "n\($0)", title: "note \($0)", author: "bulk", written_at: Int64($0)) }
        for method in ["records", "sql"] {
            let path = URL(fileURLWithPath: args.positionals[0]).appendingPathComponent("bulk-\(method)-\(getpid()).db").path
            let db = try SharedDatabase(path: path, schema: try DemoNote.schema)
            let start = monotonicMicroseconds()
            try db.write { tx in
                if method == "records" {
                    try tx.insert(contentsOf: notes)
                } else {
                    for note in notes {
                        try tx.execute(
                            "INSERT INTO notes(id, title, author, done, written_at) VALUES (?, ?, ?, ?, ?)",
                            [note.id, note.title, note.author, note.done, note.written_at])
                    }
                }
            }
            let seconds = Double(monotonicMicroseconds() - start) / 1e6
            guard try db.uploadQueue.pendingCount() == rows else { Output.error("\(method): not every row was queued\n"); return 1 }
            Output.write(String(format: "%@ %.0f\n", method, Double(rows) / seconds))
            for suffix in ["", "-wal", "-shm", "-notify", "-write.lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        return 0
    }
}

/// A program of one version: opens DB with a schema file (its tables and migrations) and writes
/// in a loop until a write fails (tests of version skew).
enum SchemaWriterCommand {
    static let command = CommandLineTool.Command(
        name: "schema-writer", summary: "(internal) write with a declared schema until refused",
        usage: """
            Usage: tandem-test-support schema-writer DB --schema FILE SQL

            Opens DB with FILE's schema (migrating it when FILE's list is longer), prints "open",
            then runs SQL (`?` is the write's number) in its own write transaction again and again,
            printing "wrote N" after each, until one fails: prints the error and exits with 3 for
            a file migrated past FILE's version, 1 otherwise.

            """, syntax: Arguments.Syntax(options: ["schema"]), hidden: true, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB", "SQL"])
        guard let schemaPath = args.options["schema"] else { throw Arguments.UsageError(message: "missing --schema FILE") }
        var configuration = Configuration()
        BusyTimeoutOption.apply(to: &configuration)
        reportWaitsForMigrations(&configuration, path: args.positionals[0])
        let db = try SharedDatabase(path: args.positionals[0], schema: try Schema(contentsOf: URL(fileURLWithPath: schemaPath)), configuration: configuration)
        defer { db.close() }
        Output.write("open\n")
        var count: Int64 = 0
        while true {
            do {
                try db.write { tx in try tx.execute(args.positionals[1], [count + 1]) }
            } catch let error as TandemError {
                Output.write("refused: \(error)\n")
                if case .schemaMigrated = error { return 3 }
                return 1
            }
            count += 1
            Output.write("wrote \(count)\n")
        }
    }
}
