// tandem-bench-writer: a writer through the Tandem library for Tools/bench.
//
//   tandem-bench-writer write DB WRITER TRANSACTIONS ROWS START_AT_US [INTERVAL_US]
//       Like `tandem stress-writer`, with a common start instant and optional pacing: transaction
//       i starts no earlier than START_AT_US + i * INTERVAL_US (CLOCK_MONOTONIC microseconds).
//       Each transaction is one `db.write` inserting ROWS rows into `stress`; after each commit
//       prints "<i> <start_us> <commit_us>".
//
//   tandem-bench-writer bulk DB ROWS
//       One `db.write` inserting ROWS rows into `stress` (view, triggers, CRUD capture, plus
//       Tandem's own bookkeeping); prints "<rows> <microseconds>".
import Foundation
import Tandem

func monotonicMicroseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
}

func sleep(until at: Int64) {
    while true {
        let wait = at - monotonicMicroseconds()
        if wait <= 0 { return }
        usleep(useconds_t(min(wait, 1_000_000)))
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("tandem-bench-writer: " + message + "\n").utf8))
    exit(2)
}

/// Writes one line to stdout at once (unbuffered, so that a reader sees each commit when it happens).
func emit(_ line: String) {
    var bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeMutableBytes { write(STDOUT_FILENO, $0.baseAddress! + offset, $0.count - offset) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { exit(1) }
        offset += n
    }
}

let args = Array(CommandLine.arguments.dropFirst())
let insert = "INSERT INTO stress(id, writer, txn, row, payload, written_at) VALUES (?, ?, ?, ?, ?, ?)"
let payload = String(repeating: "x", count: 32)

do {
    switch args.first {
    case "write":
        guard args.count >= 6, let writer = Int(args[2]), let transactions = Int(args[3]), let rows = Int(args[4]),
              let startAt = Int64(args[5]) else { fail("usage: write DB WRITER TRANSACTIONS ROWS START_AT_US [INTERVAL_US]") }
        let interval = args.count > 6 ? Int64(args[6]) ?? 0 : 0
        let db = try SharedDatabase(path: args[1])
        sleep(until: startAt)
        for index in 0..<transactions {
            if interval > 0 { sleep(until: startAt + Int64(index) * interval) }
            let start = monotonicMicroseconds()
            try db.write { tx in
                for row in 0..<rows {
                    try tx.execute(insert, ["w\(writer)-t\(index)-r\(row)", writer, index, row, payload, start])
                }
            }
            emit("\(index) \(start) \(monotonicMicroseconds())")
        }
    case "bulk":
        guard args.count >= 3, let rows = Int(args[2]) else { fail("usage: bulk DB ROWS") }
        let db = try SharedDatabase(path: args[1])
        let start = monotonicMicroseconds()
        try db.write { tx in
            for row in 0..<rows {
                try tx.execute(insert, ["w0-t\(row)-r0", 0, row, 0, payload, start])
            }
        }
        emit("\(rows) \(monotonicMicroseconds() - start)")
    default:
        fail("usage: tandem-bench-writer write|bulk ...")
    }
} catch {
    fail("\(error)")
}
