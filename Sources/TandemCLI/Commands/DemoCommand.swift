import Foundation
import Synchronization
import Tandem

enum DemoCommand {
    static let command = CommandLineTool.Command(
        name: "demo", summary: "run the main job: live cross-process updates and sync, in a temporary directory",
        usage: """
            Usage: tandem demo [--seconds S] [--writers N] [--keep]

            In a temporary directory: two client databases A and B syncing through an embedded
            backend, an app process on each (the sync owners), N helper writer processes (default 3)
            inserting and updating notes on A for S seconds (default 4), and a watcher process on
            each database whose live view this terminal shows. Ends with a summary: rows, CRUD
            entries, and the commit-to-watcher latency within A and from A to B.
            --keep leaves the directory in place.

            Example: tandem demo --seconds 10

            """, syntax: Arguments.Syntax(flags: ["keep"], options: ["seconds", "writers"]), hidden: false, stopsOnSignal: true, run: run)

    struct View { var notes = 0, done = 0, last: Int64 = 0, updates = 0 }
    /// One of the latest notes a watcher shows.
    struct Latest { var title: String, author: String, done: Bool, writtenAt: Int64 }
    struct Shared {
        var views = ["A": View(), "B": View()]
        var latest = ["A": [Latest](), "B": [Latest]()]
        var latencies = ["A": [Double](), "B": [Double]()]
        var uploaded = 0
        var owners: [String] = []
    }

    static func run(_ words: [String]) async throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require([])
        let seconds = try args.seconds("seconds", default: 4)
        let writers = try args.integer("writers", default: 3, range: 1...32)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-demo-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { if !args.has("keep") { try? FileManager.default.removeItem(at: dir) } }
        let a = dir.appendingPathComponent("A.db").path, b = dir.appendingPathComponent("B.db").path
        let backend = "sqlite:" + dir.appendingPathComponent("server.db").path
        let schema = try DemoNote.schema
        _ = try SharedDatabase(path: a, schema: schema)
        _ = try SharedDatabase(path: b, schema: schema)
        Output.write("Tandem demo in \(dir.path)\n  A.db, B.db: client databases; server.db: embedded backend\n")

        let shared = Mutex(Shared())
        var children: [ChildProcess] = []
        // Ctrl-C or SIGTERM: stop every child, remove the directory, exit 130.
        let running = Mutex<[ChildProcess]>([])
        let keep = args.has("keep")
        Signals.onTerminate {
            let all = running.withLock { $0 }
            for child in all { child.terminate() }
            for child in all { child.wait() }
            if !keep { try? FileManager.default.removeItem(at: dir) }
            Output.error("\ntandem demo: interrupted\n")
            exit(130)
        }
        for (name, path) in [("A", a), ("B", b)] {
            let app = ChildProcess(label: "app-\(name)", arguments: ["app", path, "--backend", backend, "--json"])
            try app.start { line, _ in
                shared.withLock { s in
                    if line.contains("\"became_owner\"") { s.owners.append(name) }
                    if name == "A", line.contains("\"uploaded\""), let n = jsonInt(line, "transactions") { s.uploaded += n }
                }
            }
            children.append(app)
            running.withLock { $0.append(app) }
            let sql = "SELECT count(*) AS notes, coalesce(sum(done), 0) AS done, coalesce(max(written_at), 0) AS last FROM notes"
            let watcher = ChildProcess(label: "watch-\(name)", arguments: ["watch", path, sql, "--json"])
            try watcher.start { line, at in
                guard let notes = jsonInt(line, "notes"), let done = jsonInt(line, "done"), let last = jsonInt(line, "last") else { return }
                shared.withLock { s in
                    let old = s.views[name]!
                    if Int64(last) > old.last && old.updates > 0 { s.latencies[name]!.append(Double(at - Int64(last))) }
                    s.views[name] = View(notes: notes, done: done, last: Int64(last), updates: old.updates + 1)
                }
            }
            children.append(watcher)
            running.withLock { $0.append(watcher) }
            // The notes themselves: the five written last, with their writer and age.
            let latestSQL = "SELECT title, author, done, written_at FROM notes ORDER BY written_at DESC, id LIMIT 5"
            let notes = ChildProcess(label: "notes-\(name)", arguments: ["watch", path, latestSQL, "--json"])
            try notes.start { line, _ in
                guard let data = line.data(using: .utf8), let rows = (try? JSONSerialization.jsonObject(with: data)) as? [[String: Any]] else { return }
                let latest = rows.map {
                    Latest(
                        title: $0["title"] as? String ?? "", author: $0["author"] as? String ?? "",
                        done: ($0["done"] as? NSNumber)?.intValue == 1, writtenAt: ($0["written_at"] as? NSNumber)?.int64Value ?? 0)
                }
                shared.withLock { $0.latest[name] = latest }
            }
            children.append(notes)
            running.withLock { $0.append(notes) }
        }
        let helpers = (1...writers).map { i in
            ChildProcess(label: "helper-\(i)", arguments: ["helper", a, "--name", "writer-\(i)", "--seconds", String(seconds)])
        }
        for helper in helpers {
            try helper.start { _, _ in }
            running.withLock { $0.append(helper) }
        }

        let tty = StandardStreams.isTerminal(STDOUT_FILENO)
        var drawn = 0
        func show() {
            let s = shared.withLock { $0 }
            if tty {
                // Redrawn in place: up over the last frame, each line cleared before it is written.
                let lines = DemoView.frame(s, now: monotonicMicroseconds())
                Output.write((drawn > 0 ? "\u{1B}[\(drawn)A" : "") + lines.map { "\r\u{1B}[2K" + $0 + "\n" }.joined())
                drawn = lines.count
            } else {
                Output.write(DemoView.summaryLine(s) + "\n")
            }
        }
        var ticks = 0
        while helpers.contains(where: \.isRunning) {
            try await Task.sleep(nanoseconds: 100_000_000)
            ticks += 1
            if tty || ticks % 5 == 0 { show() }
        }
        for helper in helpers { helper.wait() }
        let db = try SharedDatabase(path: a)
        let expected = try await db.read { try $0.scalar("SELECT count(*) FROM notes").int64Value ?? 0 }
        let deadline = Date(timeIntervalSinceNow: 15)
        while Date() < deadline {
            let s = shared.withLock { $0 }
            if Int64(s.views["B"]!.notes) == expected && s.views["A"]!.done == s.views["B"]!.done { break }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        show()
        for child in children { child.terminate() }
        for child in children { child.wait() }

        let s = shared.withLock { $0 }
        let pending = try db.uploadQueue.pendingCount()
        let bRows = try await SharedDatabase(path: b).read { try $0.scalar("SELECT count(*) FROM notes").int64Value ?? 0 }
        let withinA = Percentiles(s.latencies["A"]!), toB = Percentiles(s.latencies["B"]!)
        Output.write(
            """

            Summary
              notes on A: \(expected), on B: \(bRows)\(bRows == expected ? " (in sync)" : " (NOT in sync)")
              transactions uploaded from A: \(s.uploaded); CRUD entries still queued on A: \(pending)
              commit to watcher on A (another process): median \(milliseconds(withinA.value(50))), p99 \(milliseconds(withinA.value(99))) over \(withinA.count) updates
              commit on A to watcher on B (through the backend): median \(milliseconds(toB.value(50))), p99 \(milliseconds(toB.value(99))) over \(toB.count) updates

            """)
        return bRows == expected && pending == 0 ? 0 : 1
    }

    /// A number field of a one-object JSON array line, e.g. `[{"notes":3,…}]`.
    static func jsonInt(_ line: String, _ key: String) -> Int? {
        guard let data = line.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) else { return nil }
        let dict = (object as? [[String: Any]])?.first ?? (object as? [String: Any])
        return (dict?[key] as? NSNumber)?.intValue
    }
}
