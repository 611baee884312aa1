import Foundation
import Tandem

/// The demo's helper writer: inserts notes and marks some done, for a few seconds.
enum HelperCommand {
    static let command = CommandLineTool.Command(
        name: "helper", summary: "(internal) demo writer",
        usage: """
            Usage: tandem helper DB --name NAME [--seconds S] [--interval-ms MS]

            Inserts a note every MS ms (default 40) for S seconds (default 4), stamping
            written_at with CLOCK_MONOTONIC microseconds, and marks every third note done.

            """, hidden: true, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, options: ["name", "seconds", "interval-ms"])
        try args.require(["DB"])
        let db = try openDatabase(args.positionals[0])
        let name = args.options["name"] ?? "helper-\(getpid())"
        let seconds = try args.seconds("seconds", default: 4)
        let interval = try args.integer("interval-ms", default: 40, range: 0...60_000)
        let end = Date(timeIntervalSinceNow: seconds)
        var count = 0
        var ids: [String] = []
        while Date() < end {
            count += 1
            let id = try db.write { tx -> String in
                let id = UUID().uuidString.lowercased()
                try tx.execute("INSERT INTO notes(id, title, author, done, written_at) VALUES (?, ?, ?, 0, ?)",
                               [id, "\(name) note \(count)", name, monotonicMicroseconds()])
                return id
            }
            ids.append(id)
            if count % 3 == 0, let target = ids.randomElement() {
                try db.write { try $0.execute("UPDATE notes SET done = 1, written_at = ? WHERE id = ?", [monotonicMicroseconds(), target]) }
            }
            if interval > 0 { usleep(useconds_t(interval * 1000)) }
        }
        Output.write("\(name): \(count) notes written\n")
        return 0
    }
}
