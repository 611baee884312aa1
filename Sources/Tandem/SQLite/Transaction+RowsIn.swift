import Foundation

extension Transaction {
    /// Every row of `table` (a user table or view) whose `column` holds one of `values`:
    /// `SELECT * … WHERE column IN (…) ORDER BY id`, in chunks of 500 values (well under SQLite's
    /// bound-parameter limit) so a list of any length works; rows are in id order per chunk.
    func fetchAll(from table: String, where column: String, in values: [String]) throws -> [Row] {
        var rows: [Row] = []
        let chunk = 500
        for start in stride(from: 0, to: values.count, by: chunk) {
            let part = Array(values[start..<min(start + chunk, values.count)])
            let marks = Array(repeating: "?", count: part.count).joined(separator: ", ")
            rows += try fetchAll("SELECT * FROM \(SQLText.identifier(table)) WHERE \(SQLText.identifier(column)) IN (\(marks)) ORDER BY id", part)
        }
        return rows
    }
}
