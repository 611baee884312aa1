import CSQLite

/// The rows a script of the user's statements changed, as `tandem exec` reports them: what each
/// statement did to the user's tables, net of the savepoints rolled back.
///
/// - A statement through a table's view changes no row SQLite counts (its INSTEAD OF trigger
///   writes the data table): it counts the rows the preupdate hook saw it write there, where an
///   `INSERT OR REPLACE` of an existing row (SQLite deletes the old row, then inserts) is one;
///   through an insert-only table's view, which keeps no row, the entries it queued.
/// - A statement on a plain table counts what `sqlite3_changes64` says (a replaced row once, a
///   `DELETE` without `WHERE` every row).
/// - A statement that fails changed nothing (SQLite rolled it back); `ROLLBACK TO` takes back
///   what the statements since its `SAVEPOINT` counted.
///
/// Related SQLite documentation: https://www.sqlite.org/c3ref/changes.html
struct RowCount {
    private(set) var total = 0
    /// Open savepoints, innermost last, with the total when each began.
    private var savepoints: [(name: String, total: Int)] = []

    /// `statement` completed: `dataTableRows` rows written behind the views, `queuedEntries`
    /// entries queued for upload, `changes` SQLite's count for it.
    mutating func finished(_ statement: Statement, dataTableRows: Int, queuedEntries: Int, changes: Int) {
        if let savepoint = statement.savepoint {
            let index = savepoints.lastIndex { $0.name.lowercased() == savepoint.name.lowercased() }
            switch savepoint.operation {
            case .begin:
                savepoints.append((savepoint.name, total))
            case .release:
                if let index { savepoints.removeSubrange(index...) }
            case .rollback:
                if let index {
                    total = savepoints[index].total
                    savepoints.removeSubrange((index + 1)...)
                }
            }
            return
        }
        if dataTableRows > 0 {
            total += dataTableRows
        } else if queuedEntries > 0 {
            total += queuedEntries
        } else if statement.writeTarget != nil {
            total += changes
        }
    }
}
