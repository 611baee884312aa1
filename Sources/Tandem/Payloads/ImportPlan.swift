/// A nested list of one element (``ImportOptions/nested``): the children of one parent, read
/// whole (they are part of one element) and compared with the parent's stored children, which
/// are the rows the list replaces (missing ones deleted with ``ImportOptions/deleteMissing``).
struct ImportPlan {
    let table: TableSchema
    /// The rows in payload order.
    let rows: [ImportRow]
    /// The parent's column and id: only these rows are compared and deleted.
    let scope: (column: String, value: String)

    init(
        elements: [JSONValue], table name: String, parent: (column: String, id: String), schema: Schema,
        options: ImportOptions, path: String, on connection: Connection
    ) throws {
        guard let table = schema.table(named: name) else {
            throw TandemError.invalidSchema(
                SchemaProblem(.unknownTable, table: name, "'\(name)' is not a declared table (declared: \(schema.tables.map(\.name).joined(separator: ", ")))"))
        }
        self.table = table
        scope = (parent.column, parent.id)
        let reader = try ImportRowReader(table: table, schema: schema, options: options, parent: parent, on: connection)
        var rows: [ImportRow] = []
        var seen: Set<ExactText> = []  // ids by their bytes, as SQLite tells them apart
        for (index, element) in elements.enumerated() {
            let at = "\(path)[\(index)]"
            let row = try reader.row(from: element, at: at, path: at)
            guard seen.insert(ExactText(row.id)).inserted else { throw TandemError.invalidPayload("element \(at): id '\(row.id)' appears twice in the payload") }
            rows.append(row)
        }
        self.rows = rows
    }

    /// Inserts, patches and (with `deleteMissing`) deletes through the table's view.
    func apply(in tx: Transaction, result: inout ImportResult, deleteMissing: Bool) throws {
        let quoted = SQLText.identifier(table.name)
        let stored = try tx.fetchAll("SELECT * FROM \(quoted) WHERE \(SQLText.identifier(scope.column)) = ?", [scope.value])
        // Ids by their bytes throughout: Swift's `String` equality would take `é` and `e` with a
        // combining accent, two rows to SQLite, for one.
        var existing: [ExactText: Row] = [:]
        for row in stored { if let id = row["id"]?.stringValue { existing[ExactText(id)] = row } }
        // A payload id stored outside the scope (a child that moved to this parent) is updated,
        // not inserted again: those few rows are looked up by id.
        var everything = existing
        for row in try tx.fetchAll(from: table.name, where: "id", in: rows.map(\.id).filter { existing[ExactText($0)] == nil }) {
            if let id = row["id"]?.stringValue { everything[ExactText(id)] = row }
        }
        var counts = ImportResult.Counts()
        for row in rows {
            if let current = everything[ExactText(row.id)] {
                if try ImportPlan.update(row, from: current, of: table, in: tx) { counts.updated += 1 } else { counts.unchanged += 1 }
            } else {
                try ImportPlan.insert(row, into: table, in: tx)
                counts.inserted += 1
            }
        }
        if deleteMissing {
            let payloadIDs = Set(rows.map { ExactText($0.id) })
            for id in existing.keys.sorted() where !payloadIDs.contains(id) {
                try tx.execute("DELETE FROM \(quoted) WHERE id = ?", [id.text])
                counts.deleted += 1
            }
        }
        result.add(counts, for: table.name)
    }

    /// `row` through the view's INSERT (the columns it gives).
    static func insert(_ row: ImportRow, into table: TableSchema, in tx: Transaction) throws {
        let given = table.columns.indices.filter { row.values[$0] != nil }
        let names = ["id"] + given.map { table.columns[$0].name }
        try tx.execute(
            "INSERT INTO \(SQLText.identifier(table.name))(\(names.map(SQLText.identifier).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))",
            [DatabaseValue.text(row.id)] + given.map { row.values[$0]! })
    }

    /// Updates the columns of `row` whose values differ from `current` (the row as the view
    /// shows it) through the view: one minimal PATCH. False when none differs.
    static func update(_ row: ImportRow, from current: Row, of table: TableSchema, in tx: Transaction) throws -> Bool {
        let changed = table.columns.indices.filter { index in
            guard let value = row.values[index] else { return false }
            return current[table.columns[index].name].map { exactlyEqual($0, value) } != true
        }
        guard !changed.isEmpty else { return false }
        let names = changed.map { table.columns[$0].name }.sorted()
        let values = names.map { name in row.values[table.columns.firstIndex { $0.name == name }!]! }
        try tx.execute(
            "UPDATE \(SQLText.identifier(table.name)) SET \(names.map { "\(SQLText.identifier($0)) = ?" }.joined(separator: ", ")) WHERE id = ?",
            values + [DatabaseValue.text(row.id)])
        return true
    }

    /// Equal values of the same storage class (2 and 2.0 differ; -0.0 and 0.0 differ; text by
    /// its bytes, so "é" and "e\u{301}", which Swift's `==` takes for equal, differ).
    static func exactlyEqual(_ a: DatabaseValue, _ b: DatabaseValue) -> Bool {
        switch (a, b) {
        case (.real(let x), .real(let y)): return x.bitPattern == y.bitPattern
        case (.text(let x), .text(let y)): return x.utf8.elementsEqual(y.utf8)
        default: return a == b
        }
    }

    /// An insert-only table keeps no local rows: an import into it inserts (queues a PUT for)
    /// every element, and cannot find rows missing from the payload or compare within a scope.
    static func checkInsertOnly(_ options: ImportOptions, table: TableSchema, schema: Schema) throws {
        let insertOnly = ([table.name] + options.nested.values.sorted()).filter { schema.table(named: $0)?.insertOnly == true }
        guard let first = insertOnly.first else { return }
        let why = "\(first) is insert-only: it keeps no local rows (they go to the backend), so"
        func refuse(_ what: String) -> TandemError { .invalidSchema(SchemaProblem(.invalidTable, table: first, "\(why) \(what)")) }
        if options.deleteMissing { throw refuse("no row can be found missing from the payload; leave out deleting missing rows (--delete-missing)") }
        if table.insertOnly, options.scope != nil { throw refuse("there are no rows to compare within a scope; leave out the scope (--scope)") }
    }

    /// Every key map target is the id or a column of a table of the import, and no key is both
    /// mapped and nested.
    static func checkKeyMap(_ options: ImportOptions, table: TableSchema, schema: Schema) throws {
        let tables = [table] + options.nested.values.sorted().compactMap { schema.table(named: $0) }
        for (key, target) in options.keyMap.sorted(by: { $0.key < $1.key }) {
            if let nested = options.nested[key] {
                throw TandemError.invalidPayload("the key '\(key)' is both mapped (to \(target)) and nested (into \(nested)); give it one")
            }
            guard target == "id" || tables.contains(where: { $0.columns.contains { $0.name == target } }) else {
                let columns = (["id"] + table.columns.map(\.name)).joined(separator: ", ")
                throw TandemError.invalidPayload("the key map \(key)=\(target) names no column: \(table.name) has no column '\(target)' (its columns: \(columns))")
            }
        }
    }

    /// The child table's column that holds the parent's id: `{singular parent}_id`, or `{parent}_id`.
    static func referenceColumn(child: String, parent: String, schema: Schema) throws -> String {
        guard let table = schema.table(named: child) else {
            throw TandemError.invalidSchema(SchemaProblem(.unknownTable, table: child, "nested table '\(child)' is not declared"))
        }
        let singular = parent.hasSuffix("s") ? String(parent.dropLast()) : parent
        for candidate in [singular + "_id", parent + "_id"] where table.columns.contains(where: { $0.name == candidate }) { return candidate }
        throw TandemError.invalidSchema(
            SchemaProblem(.unknownColumn, table: child, column: singular + "_id", "nested table '\(child)' has no column \(singular)_id for its parent's id"))
    }

    /// A JSON value as the column stores it, or an error naming where and why it does not fit.
    ///
    /// The JSON value is read as the SQL value it spells (a string as text, a number as an
    /// integer or a real, a boolean as 0 or 1 for an integer column), except that a date string
    /// is a real (seconds since 1970) for a real column; then the column's rule applies, as on
    /// every write path (``StoredValue``): `2.0` is 2 in an integer column, `"12"` is 12.
    static func databaseValue(
        _ value: JSONValue, for column: ColumnSchema, of table: TableSchema, at place: String,
        on connection: Connection
    ) throws -> DatabaseValue {
        let sqlValue: DatabaseValue
        switch (value, column.type) {
        case (.null, _): sqlValue = .null
        case (.string(let s), .real):
            do {
                sqlValue = .real(try ISO8601Timestamp.secondsSince1970(s))
            } catch {
                // Not a date: the text as SQL would store it (a number spelled as text, exactly).
                if let stored = try? StoredValue.of(.text(s), column: column, table: table, on: connection) { return stored }
                throw TandemError.invalidPayload("\(place): \(value.jsonText.prefix(60)) does not fit the \(column.type.rawValue) column \(column.name): \(error.reason)")
            }
        case (.string(let s), _): sqlValue = .text(s)
        case (.integer(let i), _): sqlValue = .integer(i)
        case (.double(let d), _): sqlValue = .real(d)
        case (.bool(let b), .integer): sqlValue = .integer(b ? 1 : 0)
        default: throw TandemError.invalidPayload("\(place): \(value.jsonText.prefix(60)) does not fit the \(column.type.rawValue) column \(column.name)")
        }
        do {
            return try StoredValue.of(sqlValue, column: column, table: table, on: connection)
        } catch TandemError.invalidValue(let refusal) {
            throw TandemError.invalidPayload("\(place): \(value.jsonText.prefix(60)) does not fit the \(column.type.rawValue) column \(column.name) (\(refusal.message))")
        }
    }
}

extension ImportResult {
    /// Adds `counts` to those of `table`.
    mutating func add(_ counts: Counts, for table: String) {
        var total = tables[table] ?? Counts()
        total.inserted += counts.inserted
        total.updated += counts.updated
        total.deleted += counts.deleted
        total.unchanged += counts.unchanged
        tables[table] = total
    }
}
