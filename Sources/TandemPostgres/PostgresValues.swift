import Foundation
import Tandem

/// CRUD entry values as text parameters for a typed PostgreSQL column; a value the column
/// cannot take is a rejected upload naming the table, column and row (the queue is kept).
enum PostgresValues {
    static func text(_ value: JSONValue, column: String, type: ColumnSchema.ColumnType, entry: CrudEntry) throws -> String? {
        func reject(_ why: String) throws -> Never {
            throw TandemError.uploadRejected(table: entry.table, rowID: entry.rowID, reason: "column \(column): \(value.jsonText.prefix(60)) \(why)")
        }
        switch (value, type) {
        case (.null, _): return nil
        case (.string(let s), .text): return PostgresText.escaped(s)
        case (.integer, .text), (.double, .text), (.bool, .text): return value.jsonText  // as the view reads it
        case (.integer(let i), .integer): return String(i)
        case (.bool(let b), .integer): return b ? "1" : "0"
        case (.double(let d), .integer):
            guard let i = Int64(exactly: d) else { try reject("is not an integer, which the server's bigint column needs") }
            return String(i)
        case (.integer(let i), .real): return String(i)
        case (.double(let d), .real):
            guard d.isFinite else { try reject("is not finite") }
            return d.description
        default: try reject("does not fit the server's \(PostgresSetup.sqlType(type)) column")
        }
    }

    static func unknownColumn(_ column: String, entry: CrudEntry) throws -> Never {
        throw TandemError.uploadRejected(
            table: entry.table, rowID: entry.rowID,
            reason:
                "column \(column) is not in the server's table: when the server's schema is newer (a rename contracted), migrate this host to it; else run \(Remedy.setUpServer.apiTerms) with the current schema"
        )
    }
}
