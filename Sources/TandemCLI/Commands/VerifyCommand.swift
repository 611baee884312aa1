import Foundation
import Tandem

enum VerifyCommand {
    static let command = CommandLineTool.Command(
        name: "verify", summary: "compare this database's synced rows with the server's, by checksums",
        usage: """
            Usage: tandem verify DB (--backend URL | --backend-file FILE) [--table T]... [--repair] [--json]

            Compares each synced table's rows in DB with the backend's, at DB's download cursor,
            through checksums: one per table, then per bucket of ids, then per row of the buckets
            that differ, so a database that agrees sends and receives checksums only. Names each
            row that differs: only here, only on the server, or different values. Rows with edits
            waiting for upload (or set aside), and rows the server changed after DB's last
            download, are counted and left out: they are not drift.

            With --repair, writes the server's state of each differing row into DB (fetched by
            id; not queued for upload), keeping every pending edit.

            Exit status: 0 when every table agrees (or every difference was repaired), 3 when
            rows differ, 1 when the comparison could not be made (nothing is changed then). Any
            process may verify, while tandem app runs or not. The result shows in tandem status.

            Example: tandem verify app.db --backend sqlite:/var/lib/app/server.db --repair

            """, syntax: Arguments.Syntax(flags: ["json", "repair"], options: ["backend", BackendURLSource.fileOption], repeatable: ["table"]), hidden: false, run: run)

    static func run(_ words: [String]) async throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"])
        let url = try BackendURLSource.url(given: args.options["backend"], args, missing: "missing --backend URL")
        let backendURL = try BackendURL(url)
        let db = try openDatabase(args.positionals[0])
        let tables = args.repeated["table"].flatMap { $0.isEmpty ? nil : $0 }
        let report = try db.sync.verify(url: backendURL, repair: args.has("repair"), tables: tables)
        if args.has("json") {
            Output.write(json(report) + "\n")
        } else {
            for table in report.tables { Output.write(lines(table).map { Output.line($0) + "\n" }.joined()) }
            let seconds = String(format: "%.2f", report.duration.seconds)
            Output.write("verified \(report.tables.count) table(s) in \(seconds) s (\(report.roundTrips) round trip(s) to the backend)\n")
        }
        let repairedAll = report.tables.allSatisfy { $0.repairedRows == $0.differences.count }
        return report.agrees || (args.has("repair") && repairedAll) ? 0 : 3
    }

    static func lines(_ table: VerifyReport.Table) -> [String] {
        var aside: [String] = []
        if table.pendingRows > 0 { aside.append("\(table.pendingRows) pending upload") }
        if table.inFlightRows > 0 { aside.append("\(table.inFlightRows) changed on the server since the last download") }
        let note = aside.isEmpty ? "" : "; left out: " + aside.joined(separator: ", ")
        guard !table.agrees else { return ["\(table.name): agrees (\(table.localRows) row(s)\(note))"] }
        var lines = ["\(table.name): \(table.differences.count) row(s) differ (\(table.localRows) here, \(table.serverRows) on the server\(note))"]
        lines += table.differences.map { "  \($0)" }
        if table.repairedRows > 0 { lines.append("  repaired \(table.repairedRows) row(s) from the server") }
        return lines
    }

    static func json(_ report: VerifyReport) -> String {
        let tables = report.tables.map { table in
            let differences = table.differences.map { Output.object([("id", Output.jsonString($0.id)), ("kind", Output.jsonString($0.kind.rawValue))]) }
            return Output.object([
                ("table", Output.jsonString(table.name)), ("agrees", table.agrees ? "true" : "false"),
                ("local_rows", String(table.localRows)), ("server_rows", String(table.serverRows)),
                ("pending_rows", String(table.pendingRows)), ("in_flight_rows", String(table.inFlightRows)),
                ("repaired_rows", String(table.repairedRows)), ("differences", "[" + differences.joined(separator: ",") + "]"),
            ])
        }
        return Output.object([
            ("agrees", report.agrees ? "true" : "false"), ("tables", "[" + tables.joined(separator: ",") + "]"),
            ("round_trips", String(report.roundTrips)), ("bytes_moved", String(report.bytesMoved)),
            ("backend_seconds", String(format: "%.3f", report.backendTime.seconds)),
            ("seconds", String(format: "%.3f", report.duration.seconds)),
        ])
    }
}
