import Foundation
import Tandem

/// Opens a database and writes with only a few file descriptors left (tests of `EMFILE` errors).
enum ScarceDescriptorsCommand {
    static let command = CommandLineTool.Command(
        name: "scarce-descriptors", summary: "(internal) open and write with few descriptors left",
        usage: """
            Usage: tandem-test-support scarce-descriptors DB --left N

            Opens /dev/null until only N more files can be opened, then opens DB, inserts a row
            into notes and reads it back, and prints "ok" (or fails with the error).

            """, syntax: Arguments.Syntax(options: ["left"]), hidden: true, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"])
        let left = try args.integer("left", default: 0, range: 0...1000)
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        while true {
            let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { break }
            held.append(fd)
        }
        for _ in 0..<min(left, held.count) { close(held.removeLast()) }
        let db = try openDatabase(args.positionals[0])
        try db.execute("INSERT INTO notes(title) VALUES ('few descriptors')")
        _ = try db.fetchAll("SELECT count(*) FROM notes")
        Output.write("ok\n")
        return 0
    }
}
