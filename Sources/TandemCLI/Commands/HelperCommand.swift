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

            """, syntax: Arguments.Syntax(options: ["name", "seconds", "interval-ms"]), hidden: true, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"])
        let db = try openDatabase(args.positionals[0])
        let name = args.options["name"] ?? "helper-\(getpid())"
        let seconds = try args.seconds("seconds", default: 4)
        let interval = try args.integer("interval-ms", default: 40, range: 0...60_000)
        let end = Date(timeIntervalSinceNow: seconds)
        var count = 0
        var notes: [DemoNote] = []
        while Date() < end {
            count += 1
            notes.append(try db.insert(DemoNote(title: "\(name) note \(count)", author: name, written_at: monotonicMicroseconds())))
            if count % 3 == 0, let index = notes.indices.randomElement(), !notes[index].done {
                notes[index].done = true
                notes[index].written_at = monotonicMicroseconds()
                try db.update(notes[index])  // one PATCH with the two changed columns
            }
            if interval > 0 { usleep(useconds_t(interval * 1000)) }
        }
        Output.write("\(name): \(count) notes written\n")
        return 0
    }
}
