import CSQLite
import Foundation

extension Statement {
    /// The error for `arguments` holding a NaN, given to this statement, which writes. SQLite has
    /// no NaN: it binds one as NULL, so a NaN written through a view would be stored as NULL and
    /// no trigger could refuse it. So the statement is not run with it: it is tried once with
    /// each NaN bound as an empty BLOB inside a savepoint that is rolled back, and the column
    /// whose rule refuses the BLOB first (``TableSchema/blobMessage(_:)``) is the one the NaN would
    /// have been stored in, named as infinity is. A NaN that no Tandem column would have stored
    /// (one compared in a `WHERE`) is refused naming its argument.
    func nanRefusal(_ arguments: [DatabaseValue]) -> Error {
        let position = (arguments.firstIndex(where: \.isNaN) ?? 0) + 1
        let byPosition = TandemError.invalidArguments(
            "argument \(position) is NaN (not a number), which SQLite reads as NULL; a statement that writes is not run with one: `\(sql)`")
        // A BLOB argument of its own would be refused the same way.
        guard !arguments.contains(where: { if case .blob = $0 { return true } else { return false } }) else { return byPosition }
        let savepoint = "tandem_nan_probe"
        do { try connection.execute("SAVEPOINT \(savepoint)") } catch { return byPosition }
        defer {
            try? connection.execute("ROLLBACK TO \(savepoint)")
            try? connection.execute("RELEASE \(savepoint)")
        }
        do {
            try bindValues(arguments.map { $0.isNaN ? .blob(Data()) : $0 })
            defer { sqlite3_reset(handle) }
            while try step() {}
        } catch let error as SQLiteError {
            if let message = connection.rules?.nanRefusal(in: error.message) {
                return SQLiteError(
                    extendedCode: error.extendedCode, message: message,
                    sql: sql, path: error.path, arguments: arguments)
            }
        } catch {}
        return byPosition
    }
}

extension DatabaseValue {
    /// True for a real that is NaN.
    var isNaN: Bool { if case .real(let d) = self { return d.isNaN } else { return false } }
}
