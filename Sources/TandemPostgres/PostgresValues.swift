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
        case (.string(let s), .integer), (.string(let s), .real):
            // Text from a host whose column has the old type of a type change.
            guard let number = numberText(s, as: type) else { try reject("does not convert to the server's \(PostgresSetup.sqlType(type)) column exactly") }
            return number
        case (.integer(let i), .real): return String(i)
        case (.double(let d), .real):
            guard d.isFinite else { try reject("is not finite") }
            return d.description
        default: try reject("does not fit the server's \(PostgresSetup.sqlType(type)) column")
        }
    }

    /// `text` as a number of `type` when a SQLite column of that type would take it exactly
    /// (``PostgresTypeChanges``'s rule, on the safe side: a number literal with spaces around it,
    /// at most 17 significant digits when it has a fraction or an exponent, an integer read from
    /// such text at most 2^53), as the parameter's text; nil otherwise.
    static func numberText(_ text: String, as type: ColumnSchema.ColumnType) -> String? {
        let body = NumberText.trimmed(text)
        guard body.wholeMatch(of: /[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?/) != nil else { return nil }
        let fractional = body.contains { ".eE".contains($0) }
        if fractional && body.prefix(while: { $0 != "e" && $0 != "E" }).filter(\.isNumber).count > 17 { return nil }
        switch (type, fractional) {
        case (.integer, false): return Int64(body).map(String.init)
        case (.integer, true):
            guard var value = Decimal(string: body, locale: Locale(identifier: "en_US_POSIX")), abs(value) <= 9_007_199_254_740_992 else { return nil }
            var whole = Decimal()
            NSDecimalRound(&whole, &value, 0, .plain)
            guard whole == value else { return nil }
            return Int64(exactly: NSDecimalNumber(decimal: whole).doubleValue).map(String.init)
        case (.real, false):
            guard let integer = Int64(body), Double(exactly: integer) != nil, let value = Double(body) else { return nil }
            return value.description  // `-0` is -0.0, as SQLite reads it
        case (.real, true):
            guard let value = Double(body), value.isFinite else { return nil }
            return value.description
        case (.text, _): return nil
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
