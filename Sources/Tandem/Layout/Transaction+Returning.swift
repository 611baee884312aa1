import CSQLite

extension Transaction {
    /// The rows of `statement`; for an INSERT or UPDATE through a declared table's view with a
    /// `RETURNING` clause, its expressions over the rows as stored.
    ///
    /// SQLite hands the clause the values the statement gave the view's INSTEAD OF trigger,
    /// not those the trigger stored: a NULL id where the trigger minted one, `'12'` where an
    /// integer column stored 12. So the statement runs without the clause, noting the rows it
    /// wrote (the rowids of the rows an INSERT added to the data table, or to the upload queue
    /// for an insert-only table; the ids an UPDATE matched), and the clause's expressions are then
    /// read over each row as the view reads it, in the statement's order. A DELETE's clause sees
    /// the rows as the view read them, which is what was stored. A clause with a parameter, or
    /// one whose expressions do not read over the view's columns alone, is left to SQLite.
    func storedRows(_ statement: Statement, _ arguments: [DatabaseValue]) throws -> [Row]? {
        guard !isReadOnly, statement.columnCount > 0, let target = statement.writeTarget,
            target.action == SQLITE_INSERT || target.action == SQLITE_UPDATE,
            let table = try SchemaInstaller.cachedStoredSchema(self)?.tables.first(where: { $0.name.lowercased() == target.table.lowercased() }),
            !(table.insertOnly && target.action == SQLITE_UPDATE),
            let clause = ReturningClause(statement.sql),
            let evaluate = try? connection.cachedStatement(table.returningSQL(clause.list))
        else {
            return nil
        }
        var rows: [(id: DatabaseValue, data: DatabaseValue)] = []
        if target.action == SQLITE_INSERT {
            guard let body = try? connection.cachedStatement(clause.body) else { return nil }
            let rowids = try connection.capturingInserts(into: table.insertedRowsTable) { try body.run(arguments) }
            for rowid in rowids {
                if let row = try connection.fetchAll(table.insertedRowSQL, [.integer(rowid)]).first { rows.append((row[0], row[1])) }
            }
        } else {
            guard let body = try? connection.cachedStatement(clause.body + "\nRETURNING id") else { return nil }
            for matched in try body.fetchAll(arguments) {
                if let row = try connection.fetchAll(table.storedRowSQL, [matched[0]]).first { rows.append((row[0], row[1])) }
            }
        }
        let names = statement.columnNames
        return try rows.map { row in
            Row(columns: names, values: try evaluate.fetchAll([row.id, row.data]).first?.values ?? Array(repeating: .null, count: names.count))
        }
    }
}
