import Foundation
import Tandem

enum BackupCommand {
    static let command = CommandLineTool.Command(
        name: "backup", summary: "write a consistent copy of a database while writers go on",
        usage: """
            Usage: tandem backup DB DEST

            Writes a consistent copy of DB to the new file DEST (SQLite's VACUUM INTO on one read
            snapshot) while other processes keep writing. Restoring it (tandem restore DEST DB, or
            copying DEST over an idle or lost DB) keeps every queued write exactly once. DEST must
            not exist. The copy gets DB's permission
            bits whatever the umask (a 0600 database gives a 0600 copy) and only its owner can read
            it while it is written. On a terminal a progress line (MB written, MB/s, time, time
            left) is redrawn on standard error; off a terminal nothing is.

            Example: tandem backup app.db /backups/app-$(date +%F).db

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB", "DEST"])
        let db = try openDatabase(args.positionals[0], readOnly: true)
        let line = ProgressLine("backup", unit: .bytes)
        defer { line.finish() }
        try db.backup(to: args.positionals[1], progress: { line.update($0.bytesWritten, total: $0.totalBytes) })
        line.finish()
        Output.write("backed up \(db.path) to \(URL(fileURLWithPath: args.positionals[1]).standardizedFileURL.path)\n")
        return 0
    }
}
