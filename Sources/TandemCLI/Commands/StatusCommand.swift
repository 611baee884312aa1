import Foundation
import Tandem

enum StatusCommand {
    static let command = CommandLineTool.Command(
        name: "status", summary: "show journal mode, upload queue and sync state",
        usage: """
            Usage: tandem status DB [--json]

            Shows the journal mode, the upload queue length, and the sync state: the owner's pid
            (null when no process owns sync), the epoch, whether the owner is connected, when it
            last synced, and the last error.

            Example: tandem status app.db --json

            """, hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, flags: ["json"])
        try args.require(["DB"])
        let db = try openDatabase(args.positionals[0], readOnly: true)
        let status = try db.syncStatus()
        let mode = try db.journalMode()
        let lastSynced = status.lastSyncedAt.map { $0.ISO8601Format() }
        if args.has("json") {
            func s(_ v: String?) -> String { v.map { JSONValue.string($0).jsonText } ?? "null" }
            Output.write(Output.object([
                ("path", s(db.path)), ("journal_mode", s(mode)), ("pending_uploads", String(status.pendingUploads)),
                ("owner_pid", status.ownerPID.map(String.init) ?? "null"), ("epoch", String(status.epoch)),
                ("connected", String(status.connected)), ("uploading", String(status.uploading)),
                ("downloading", String(status.downloading)), ("has_synced", String(status.hasSynced)),
                ("last_synced_at", s(lastSynced)), ("last_error", s(status.lastError)), ("backend", s(status.backend)),
            ]) + "\n")
        } else {
            Output.write("""
                database:        \(db.path)
                journal mode:    \(mode)
                pending uploads: \(status.pendingUploads)
                owner:           \(status.ownerPID.map { "pid \($0)" } ?? "none")
                epoch:           \(status.epoch)
                connected:       \(status.connected ? "yes" : "no")\(status.backend.map { " (\($0))" } ?? "")\(status.uploading ? ", uploading" : "")\(status.downloading ? ", downloading" : "")
                last synced:     \(lastSynced ?? "never")
                last error:      \(status.lastError.map(Output.escapingControlCharactersInMessage) ?? "none")

                """)
        }
        return 0
    }
}
