import Foundation
import Tandem

enum RestoreCommand {
    static let command = CommandLineTool.Command(
        name: "restore", summary: "replace a database with a backup, with its sidecar files",
        usage: """
            Usage: tandem restore BACKUP DB

            Replaces DB with a copy of BACKUP (a file tandem backup wrote, or an idle Tandem
            database), made with SQLite's backup API and renamed over DB, then removes DB's old
            -wal and -shm (whose frames would otherwise be read into the restored file) and its
            lock and wake-up files. Refused, changing nothing, while any process has DB open: each is named.
            DB need not exist; it keeps its permission bits. Then says what the backup's upload
            queue and download cursor mean for sync.

            Example: tandem restore /backups/app-2024-05-01.db app.db

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["BACKUP", "DB"])
        let backup = args.positionals[0]
        let path = try SharedDatabase.resolvedPath(args.positionals[1])
        try SharedDatabase.restore(from: backup, to: path)
        let db = try openDatabase(path, readOnly: true)
        let status = try db.sync.status()
        let backupPath = URL(fileURLWithPath: backup).standardizedFileURL.path
        var text = "restored \(db.path) from \(backupPath)\n"
        let entries = status.pendingUploads
        text +=
            entries == 0
            ? "upload queue: empty; writes made here after the backup and not uploaded by then are lost\n"
            : "upload queue: \(entries) change\(entries == 1 ? "" : "s") the backup had not uploaded, sent at the next sync; the backend applies each transaction once, so one it took before the backup's loss is acknowledged, not applied again; writes made here after the backup and never uploaded are lost\n"
        if status.rejectedUploads > 0 {
            text += "set aside: \(status.rejectedUploads) transaction\(status.rejectedUploads == 1 ? "" : "s") the backend refused (tandem crud lists them)\n"
        }
        if let backend = status.backend {
            text += "download cursor: where the backup left it; the next sync with \(backend) downloads every change the backend made since\n"
        } else if status.hasSynced {
            text += "download cursor: where the backup left it; the next sync downloads every change made since\n"
        } else {
            text += "download cursor: none (the backup never synced); the next sync downloads everything\n"
        }
        Output.write(text)
        return 0
    }
}
