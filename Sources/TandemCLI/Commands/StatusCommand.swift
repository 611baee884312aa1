import Foundation
import Tandem

enum StatusCommand {
    static let command = CommandLineTool.Command(
        name: "status", summary: "show journal mode, upload queue and sync state",
        usage: """
            Usage: tandem status DB [--json]

            Shows the journal mode, the upload queue length, and the sync state: the owner's pid
            (null when no process owns sync), the epoch, whether the owner is connected, when it
            last synced, the last error with its kind (backend_unavailable, rejected_upload, …), the
            last upload the backend refused (set aside: its transaction, rows and reason), and the
            last full sync with its reason, and the last verification against the server
            (tandem verify, or the owner's in the background) with its result.

            Example: tandem status app.db --json

            """, syntax: Arguments.Syntax(flags: ["json"]), hidden: false, run: run)

    static func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"])
        let db = try openDatabase(args.positionals[0], readOnly: true)
        let status = try db.sync.status()
        let mode = try db.journalMode()
        let lastSynced = status.lastSyncedAt.map { $0.ISO8601Format() }
        let migrations = try db.migrationHistory()
        if args.has("json") {
            func s(_ v: String?) -> String { v.map { Output.jsonString($0) } ?? "null" }
            Output.write(
                Output.object([
                    ("path", s(db.path)), ("journal_mode", s(mode)), ("schema_version", String(migrations.count)),
                    ("last_migration", s(migrations.last?.id)), ("pending_uploads", String(status.pendingUploads)),
                    ("committed_through", String(status.committedThrough)), ("uploaded_through", String(status.uploadedThrough)),
                    ("synced_through", String(status.syncedThrough)),
                    ("rejected_uploads", String(status.rejectedUploads)),
                    ("upload_lag_seconds", String(format: "%.3f", status.uploadLag.seconds)),
                    ("download_lag_seconds", String(format: "%.3f", status.downloadLag.seconds)),
                    ("owner_pid", status.ownerPID.map(String.init) ?? "null"), ("epoch", String(status.epoch)),
                    ("connected", String(status.connected)), ("uploading", String(status.uploading)),
                    ("downloading", String(status.downloading)), ("has_synced", String(status.hasSynced)),
                    ("last_synced_at", s(lastSynced)), ("last_error", s(status.lastFailure.map { CommandHints.say($0.message, remedy: $0.remedy) })),
                    ("last_error_kind", s(status.lastFailure?.kind.rawValue)), ("backend", s(status.backend)),
                    ("next_retry_at", s(status.lastFailure == nil ? nil : status.nextRetryAt?.ISO8601Format(.iso8601.time(includingFractionalSeconds: true).year().month().day()))),
                    ("last_refusal", status.lastRefusal.map(refusalJSON) ?? "null"),
                    ("last_full_sync", status.lastFullSync.map { Output.object([("at", s($0.at.ISO8601Format())), ("reason", s($0.reason))]) } ?? "null"),
                    ("last_verification", status.lastVerification.map(verificationJSON) ?? "null"),
                ]) + "\n")
        } else {
            Output.write(
                """
                database:        \(db.path)
                journal mode:    \(mode)
                schema version:  \(migrations.count)\(migrations.last.map { " (last migration '\(Output.escapingControlCharacters($0.id))')" } ?? "")
                pending uploads: \(status.pendingUploads)\(status.rejectedUploads > 0 ? " (and \(status.rejectedUploads) transaction\(status.rejectedUploads == 1 ? "" : "s") the backend refused, set aside: tandem crud lists them)" : "")
                positions:       committed \(status.committedThrough), uploaded \(status.uploadedThrough), synced \(status.syncedThrough) (upload queue entries)
                owner:           \(status.ownerPID.map { "pid \($0)" } ?? "none")
                epoch:           \(status.epoch)
                lag:             upload \(String(format: "%.1f", status.uploadLag.seconds)) s, download \(String(format: "%.1f", status.downloadLag.seconds)) s
                connected:       \(status.connected ? "yes" : "no")\(status.backend.map { " (\($0))" } ?? "")\(status.uploading ? ", uploading" : "")\(status.downloading ? ", downloading" : "")
                last synced:     \(lastSynced ?? "never")
                last error:      \(status.lastFailure.map { "\($0.kind.rawValue): " + Output.escapingControlCharactersInMessage(CommandHints.say($0.message, remedy: $0.remedy)) } ?? "none")\(status.lastFailure != nil && status.ownerPID != nil ? status.nextRetryAt.map { " (next try at \($0.ISO8601Format(.iso8601.time(includingFractionalSeconds: true).year().month().day())))" } ?? "" : "")
                last refusal:    \(status.lastRefusal.map(refusalText) ?? "none")
                last full sync:  \(status.lastFullSync.map { "\($0.at.ISO8601Format()): " + Output.escapingControlCharactersInMessage($0.reason) } ?? "none")
                last verified:   \(status.lastVerification.map(verificationText) ?? "never")

                """)
        }
        return 0
    }

    private static func verificationJSON(_ v: LastVerification) -> String {
        Output.object([
            ("at", Output.jsonString(v.at.ISO8601Format())), ("agrees", String(v.agrees)), ("differing_rows", String(v.differingRows)),
            ("repaired_rows", String(v.repairedRows)), ("differing_tables", "[" + v.differingTables.map(Output.jsonString).joined(separator: ",") + "]"),
            ("error", v.error.map { Output.jsonString(CommandHints.inCommandTerms($0)) } ?? "null"),
        ])
    }

    private static func verificationText(_ v: LastVerification) -> String {
        let result: String
        if let error = v.error {
            result = "failed: " + Output.escapingControlCharactersInMessage(CommandHints.inCommandTerms(error))
        } else if v.agrees {
            result = "agrees with the server"
        } else {
            let tables = v.differingTables.map(Output.escapingControlCharacters).joined(separator: ", ")
            result = "\(v.differingRows) row(s) differed (\(tables))" + (v.repairedRows > 0 ? ", \(v.repairedRows) repaired" : "")
        }
        return "\(v.at.ISO8601Format()): " + result
    }

    private static func refusalJSON(_ refusal: RejectedTransaction) -> String {
        let rows = refusal.transaction.entries.map {
            Output.object([("table", Output.jsonString($0.table)), ("id", Output.jsonString($0.rowID))])
        }
        return Output.object([
            ("transaction_id", String(refusal.transaction.transactionID)), ("rows", "[" + rows.joined(separator: ",") + "]"),
            ("error", Output.jsonString(CommandHints.inCommandTerms(refusal.error))),
            ("at", Output.jsonString(refusal.rejectedAt.ISO8601Format())),
        ])
    }

    private static func refusalText(_ refusal: RejectedTransaction) -> String {
        let rows = refusal.transaction.entries.map { "\($0.table) \($0.rowID)" }
        let shown = rows.prefix(3).joined(separator: ", ") + (rows.count > 3 ? " and \(rows.count - 3) more" : "")
        return Output.escapingControlCharactersInMessage(
            "\(refusal.rejectedAt.ISO8601Format()): transaction \(refusal.transaction.transactionID) (\(shown)): \(CommandHints.inCommandTerms(refusal.error))")
    }
}
