import Foundation
import Tandem

enum StressCommand {
    static let command = CommandLineTool.Command(
        name: "stress", summary: "stress-test concurrent writers (and sync), then verify the files",
        usage: """
            Usage: tandem stress DB [--writers N] [--transactions M] [--rows-per-transaction R]
                                    [--watchers K] [--backend URL] [--kill-every MS] [--seed N] [--no-history]
                                    [--restart-server CMD]
                                    [--synchronous normal|full] [--json]
                   tandem stress DB --verify [--json]

            Spawns N writer processes (default 8) each running M write transactions (default 500)
            of R rows (default 1) into the table `stress` of DB (a new file), and K watcher
            processes (default 2) holding a live query. With --backend, also runs app processes
            that own sync and a second client database DB.peer.db. With --kill-every MS, kill -9 a
            random writer (with a backend, sometimes the owner) every MS ms and restart it; a writer
            killed before it committed anything is spared until it commits once, so that every
            interval down to 1 ms makes progress and ends. With a backend, the chaos also pauses the
            owner (SIGSTOP) for 3 to 10 intervals and lets it go on, backs the second client up at
            a quarter of the transactions and starts it again from that backup at half, and, with
            --restart-server CMD, runs CMD (say pg_ctl restart -m immediate) at three fifths.
            --seed N replays the chaos's random choices (the report names the seed).
            --synchronous full runs the writers at SQLite's default durability (Tandem's is normal).

            Records a history while it runs: each writer reads back after every commit its own rows
            (read-your-writes) and every writer's highest transaction (which must never go back:
            monotonic reads); with R > 1, a live query on each client reports any moment it shows
            part of a transaction. --no-history turns this off (for throughput figures).

            Then verifies from the files: every transaction a writer saw commit is present once;
            no partial transactions; each row left one CRUD entry (or, with a backend, reached the
            second client once with equal state, no partial transaction there either, and both clients
            agree with the server by tandem verify's checksums); every watcher converged;
            integrity_check is ok. One verdict line per property.
            Reports throughput, commit latency (lock wait + commit) and commit-to-watcher latency.
            Exits 1 naming each failed check. --verify re-checks DB from its saved stress log. On a
            terminal a progress line (transactions, tx/s, time, time left, kills) is redrawn on
            standard error; with --json, or off a terminal, nothing is.

            Example: tandem stress /tmp/stress.db --writers 8 --transactions 500 --kill-every 50 --backend sqlite:/tmp/stress-server.db

            """,
        syntax: Arguments.Syntax(
            flags: ["json", "verify", "no-history"],
            options: ["writers", "transactions", "rows-per-transaction", "watchers", "backend", "kill-every", "synchronous", "seed", "restart-server"]), hidden: false, run: run)

    static func run(_ words: [String]) async throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"])
        let path = URL(fileURLWithPath: args.positionals[0]).standardizedFileURL.path
        if args.has("verify") { return try verifyOnly(path: path, json: args.has("json")) }

        var options = StressRun.Options(path: path)
        options.writers = try args.integer("writers", default: 8, range: 1...256)
        options.synchronous = try synchronous(args).rawValue.lowercased()
        options.transactions = try args.integer("transactions", default: 500, range: 1...10_000_000)
        options.rowsPerTransaction = try args.integer("rows-per-transaction", default: 1, range: 1...100_000)
        options.watchers = try args.integer("watchers", default: 2, range: 0...64)
        options.killEveryMilliseconds = args.options["kill-every"] != nil ? try args.integer("kill-every", default: 0, range: 1...3_600_000) : nil
        options.backend = args.options["backend"]
        options.showProgress = !args.has("json")
        options.history = !args.has("no-history")
        options.restartServerCommand = args.options["restart-server"]
        if options.restartServerCommand != nil && (options.backend == nil || options.killEveryMilliseconds == nil) {
            throw Arguments.UsageError(message: "--restart-server needs --backend and --kill-every")
        }
        if let text = args.options["seed"] {
            guard let seed = UInt64(text) else { throw Arguments.UsageError(message: "--seed takes a whole number from 0 to \(UInt64.max), not '\(text)'") }
            options.seed = seed
        } else {
            options.seed = UInt64.random(in: 0...UInt64(UInt32.max))
        }

        // Every check comes before anything is created.
        if let url = options.backend {
            _ = try BackendURL(url)
            options.peerPath = path + ".peer.db"
        }
        for file in [path] + (options.peerPath.map { [$0] } ?? []) where !isNew(file) { throw StressError.notNew(file) }
        if let url = options.backend { _ = try Tandem.openBackend(url: url) }  // created before the writers start
        let db = try SharedDatabase(path: path, schema: StressWriterCommand.schema)
        let peer = try options.peerPath.map { try SharedDatabase(path: $0, schema: StressWriterCommand.schema) }
        try? FileManager.default.removeItem(atPath: StressLog.path(for: path))
        let report = try await StressExecution(options: options, database: db, peer: peer).run()
        Output.write(args.has("json") ? report.json + "\n" : report.text)
        return report.passed ? 0 : 1
    }

    /// A stress run writes into a new file: missing or empty.
    static func isNew(_ path: String) -> Bool {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int else { return true }
        return size == 0
    }

    static func verifyOnly(path: String, json: Bool) throws -> Int32 {
        let log = try StressLog.load(for: path)
        let db = try SharedDatabase(path: path)
        let peer = try log.peer.map { try SharedDatabase(path: $0) }
        let serverPath = log.backend.flatMap(StressExecution.embeddedServerPath)
        let checks = try StressVerifier(log: log, database: db, peer: peer, serverPath: serverPath).run()
        let report = StressReport(checks: checks)
        Output.write(json ? report.json + "\n" : report.text)
        return report.passed ? 0 : 1
    }
}

/// `--synchronous normal|full`: the writers' durability (SQLite's `synchronous` in WAL mode).
func synchronous(_ args: Arguments) throws -> Configuration.Synchronous {
    switch args.options["synchronous"]?.lowercased() ?? "normal" {
    case "normal": return .normal
    case "full": return .full
    case let other: throw Arguments.UsageError(message: "--synchronous takes normal or full, not '\(other)'")
    }
}
