import Foundation

extension SharedDatabase {
    /// Syncs a JSON array of objects into `table`, SwiftSync-style, in one write transaction.
    ///
    /// Keys map to columns by exact name, then by convention (`createdAt` ↔ `created_at`), after
    /// ``ImportOptions/keyMap``. An insert-only table keeps no local rows to compare with: every
    /// element is inserted (one PUT each, again at every import of it; the backend's PUT replaces
    /// the row, so the same payload gives the same rows), and ``ImportOptions/deleteMissing`` and
    /// ``ImportOptions/scope`` are refused for it. Each object needs a non-empty `id` (text or integer). New ids
    /// are inserted; rows whose mapped values differ are updated (only those columns, so each
    /// queues one minimal PATCH); equal rows are left alone (no CRUD entry); rows missing from
    /// the payload are deleted only with ``ImportOptions/deleteMissing``. Each value is the SQL
    /// value it spells (a string text, a number an integer or a real, a boolean 0 or 1 for an
    /// `integer` column, null NULL), stored by the rule every write path follows: converted only
    /// when exactly (`2.0` as 2 in an `integer` column, `"12"` as 12, `42` as `"42"` in a `text`
    /// column). A string for a `real` column may also be an ISO 8601 date and time (read whole:
    /// fractional seconds and zone offsets kept, a time without a zone taken as UTC), stored as
    /// seconds since 1970; what is neither a date nor a number is refused with the reason.
    ///
    /// A payload that does not fit (not an array of objects, a missing or duplicate id, a value
    /// of the wrong type, an unknown key with ``ImportOptions/strict``) is rejected whole with the
    /// first bad element's index and key, and nothing is written.
    /// - Throws: ``TandemError/invalidJSON(_:)`` for the payload; ``TandemError/invalidSchema(_:)``
    ///   for a table that is not declared; what a write transaction throws.
    @discardableResult
    public func importJSON(_ data: Data, into table: String, options: ImportOptions = ImportOptions()) throws -> ImportResult {
        guard let text = String(data: data, encoding: .utf8) else { throw TandemError.invalidJSON("the payload is not UTF-8") }
        guard case .array(let elements) = try JSONValue(parsing: text) else {
            throw TandemError.invalidJSON("the payload must be a JSON array of objects")
        }
        return try importElements(elements, into: table, options: options)
    }

    /// ``importJSON(_:into:options:)`` of a payload already parsed.
    func importElements(_ elements: [JSONValue], into table: String, options: ImportOptions) throws -> ImportResult {
        try write { tx in
            let plan = try ImportPlan(elements: elements, table: table, parent: nil, schema: schema, options: options, path: "", on: tx.connection)
            var result = ImportResult()
            try plan.apply(in: tx, result: &result, deleteMissing: options.deleteMissing)
            return result
        }
    }
}

/// A validated payload for one table (and its nested tables): rows of column values by id.
struct ImportPlan {
    let table: TableSchema
    /// (id, columns present in the element) in payload order.
    let rows: [(id: String, values: [String: DatabaseValue])]
    /// Only rows with this column value are compared and deleted.
    let scope: (column: String, value: String)?
    /// Children per parent id, per nested table.
    let children: [(parentID: String, plan: ImportPlan)]

    init(elements: [JSONValue], table name: String, parent: (column: String, id: String)?, schema: Schema,
         options: ImportOptions, path: String, on connection: Connection) throws {
        guard let table = schema.table(named: name) else {
            throw TandemError.invalidSchema("'\(name)' is not a declared table (declared: \(schema.tables.map(\.name).joined(separator: ", ")))")
        }
        self.table = table
        self.scope = parent.map { ($0.column, $0.id) } ?? options.scope
        if parent == nil {
            try ImportPlan.checkKeyMap(options, table: table, schema: schema)
            try ImportPlan.checkInsertOnly(options, table: table, schema: schema)
        }
        let keys = ImportKeys(table: table, options: options)
        var rows: [(String, [String: DatabaseValue])] = []
        var seen: Set<String> = []
        var children: [(String, ImportPlan)] = []
        // Per nested key: the child table's column for the parent's id, found once.
        let references = try options.nested.mapValues { try ImportPlan.referenceColumn(child: $0, parent: name, schema: schema) }
        let childOptions = ImportOptions(keyMap: options.keyMap, strict: options.strict)
        for (index, element) in elements.enumerated() {
            let at = "\(path)[\(index)]"
            guard case .object(let object) = element else { throw TandemError.invalidJSON("element \(at) is not an object") }
            let element = try keys.resolve(object, at: at)
            let id: String
            switch element.id {
            case (_, .string(let text))? where !text.isEmpty: id = text
            case (_, .integer(let number))?: id = String(number)
            default:
                let key = element.id?.key ?? "id"
                throw TandemError.invalidJSON("element \(at) has no id (a non-empty text or an integer under the key '\(key)')")
            }
            guard seen.insert(id).inserted else { throw TandemError.invalidJSON("element \(at): id '\(id)' appears twice in the payload") }
            var values: [String: DatabaseValue] = [:]
            for (key, value, column) in element.columns {
                values[column.name] = try ImportPlan.databaseValue(value, for: column, of: table, at: "element \(at), key '\(key)'", on: connection)
            }
            if let parent {
                if let given = element.columns.first(where: { $0.column.name == parent.column }), values[parent.column] != .text(parent.id) {
                    throw TandemError.invalidJSON("element \(at), key '\(given.key)': \(given.value.jsonText.prefix(60)) is not the id of the element it is nested in ('\(parent.id)'), which \(parent.column) takes")
                }
                values[parent.column] = .text(parent.id)
            }
            for (key, value) in element.nested {
                guard case .array(let childElements) = value, let childTable = options.nested[key], let reference = references[key] else {
                    throw TandemError.invalidJSON("element \(at), key '\(key)': a nested list must be an array of objects")
                }
                children.append((id, try ImportPlan(elements: childElements, table: childTable, parent: (reference, id),
                                                    schema: schema, options: childOptions, path: "\(at).\(key)", on: connection)))
            }
            rows.append((id, values))
        }
        self.rows = rows
        self.children = children
    }

    /// An insert-only table keeps no local rows: an import into it inserts (queues a PUT for)
    /// every element, and cannot find rows missing from the payload or compare within a scope.
    static func checkInsertOnly(_ options: ImportOptions, table: TableSchema, schema: Schema) throws {
        let insertOnly = ([table.name] + options.nested.values.sorted()).filter { schema.table(named: $0)?.insertOnly == true }
        guard let first = insertOnly.first else { return }
        let why = "\(first) is insert-only: it keeps no local rows (they go to the backend), so"
        if options.deleteMissing { throw TandemError.invalidSchema("\(why) no row can be found missing from the payload; leave out deleting missing rows (--delete-missing)") }
        if table.insertOnly, options.scope != nil { throw TandemError.invalidSchema("\(why) there are no rows to compare within a scope; leave out the scope (--scope)") }
    }

    /// Every key map target is the id or a column of a table of the import, and no key is both
    /// mapped and nested.
    static func checkKeyMap(_ options: ImportOptions, table: TableSchema, schema: Schema) throws {
        let tables = [table] + options.nested.values.sorted().compactMap { schema.table(named: $0) }
        for (key, target) in options.keyMap.sorted(by: { $0.key < $1.key }) {
            if let nested = options.nested[key] {
                throw TandemError.invalidJSON("the key '\(key)' is both mapped (to \(target)) and nested (into \(nested)); give it one")
            }
            guard target == "id" || tables.contains(where: { $0.columns.contains { $0.name == target } }) else {
                let columns = (["id"] + table.columns.map(\.name)).joined(separator: ", ")
                throw TandemError.invalidJSON("the key map \(key)=\(target) names no column: \(table.name) has no column '\(target)' (its columns: \(columns))")
            }
        }
    }

    /// The child table's column that holds the parent's id: `{singular parent}_id`, or `{parent}_id`.
    static func referenceColumn(child: String, parent: String, schema: Schema) throws -> String {
        guard let table = schema.table(named: child) else {
            throw TandemError.invalidSchema("nested table '\(child)' is not declared")
        }
        let singular = parent.hasSuffix("s") ? String(parent.dropLast()) : parent
        for candidate in [singular + "_id", parent + "_id"] where table.columns.contains(where: { $0.name == candidate }) { return candidate }
        throw TandemError.invalidSchema("nested table '\(child)' has no column \(singular)_id for its parent's id")
    }

    /// A JSON value as the column stores it, or an error naming where and why it does not fit.
    ///
    /// The JSON value is read as the SQL value it spells (a string as text, a number as an
    /// integer or a real, a boolean as 0 or 1 for an integer column), except that a date string
    /// is a real (seconds since 1970) for a real column; then the column's rule applies, as on
    /// every write path (``StoredValue``): `2.0` is 2 in an integer column, `"12"` is 12.
    static func databaseValue(_ value: JSONValue, for column: ColumnSchema, of table: TableSchema, at place: String,
                              on connection: Connection) throws -> DatabaseValue {
        let sqlValue: DatabaseValue
        switch (value, column.type) {
        case (.null, _): sqlValue = .null
        case (.string(let s), .real):
            do {
                sqlValue = .real(try ISO8601Timestamp.secondsSince1970(s))
            } catch {
                // Not a date: the text as SQL would store it (a number spelled as text, exactly).
                if let stored = try? StoredValue.of(.text(s), column: column, table: table, on: connection) { return stored }
                throw TandemError.invalidJSON("\(place): \(value.jsonText.prefix(60)) does not fit the \(column.type.rawValue) column \(column.name): \(error.reason)")
            }
        case (.string(let s), _): sqlValue = .text(s)
        case (.integer(let i), _): sqlValue = .integer(i)
        case (.double(let d), _): sqlValue = .real(d)
        case (.bool(let b), .integer): sqlValue = .integer(b ? 1 : 0)
        default: throw TandemError.invalidJSON("\(place): \(value.jsonText.prefix(60)) does not fit the \(column.type.rawValue) column \(column.name)")
        }
        do {
            return try StoredValue.of(sqlValue, column: column, table: table, on: connection)
        } catch TandemError.invalidArguments(let reason) {
            throw TandemError.invalidJSON("\(place): \(value.jsonText.prefix(60)) does not fit the \(column.type.rawValue) column \(column.name) (\(reason))")
        }
    }

    func apply(in tx: Transaction, result: inout ImportResult, deleteMissing: Bool) throws {
        let quoted = SQLText.identifier(table.name)
        var filter = ""
        var filterArguments: [DatabaseValue] = []
        if let scope {
            guard table.columns.contains(where: { $0.name == scope.column }) else {
                throw TandemError.invalidSchema("scope column '\(scope.column)' is not a column of \(table.name)")
            }
            filter = " WHERE \(SQLText.identifier(scope.column)) = ?"
            filterArguments = [.text(scope.value)]
        }
        let stored = try tx.fetchAll("SELECT * FROM \(quoted)\(filter)", filterArguments)
        var existing: [String: Row] = [:]
        for row in stored { if let id = row["id"]?.stringValue { existing[id] = row } }
        // A payload id stored outside the scope (a child that moved to this parent) is updated,
        // not inserted again: those few rows are looked up by id.
        var everything = existing
        let outside = scope == nil ? [] : rows.map(\.id).filter { existing[$0] == nil }
        for row in try tx.fetchAll(from: table.name, where: "id", in: outside) {
            if let id = row["id"]?.stringValue { everything[id] = row }
        }
        var counts = result.tables[table.name] ?? ImportResult.Counts()
        for (id, values) in rows {
            if let current = everything[id] {
                let changed = values.filter { column, value in current[column].map { exactlyEqual($0, value) } != true }
                if changed.isEmpty { counts.unchanged += 1; continue }
                let names = changed.keys.sorted()
                try tx.execute("UPDATE \(quoted) SET \(names.map { "\(SQLText.identifier($0)) = ?" }.joined(separator: ", ")) WHERE id = ?",
                               names.map { changed[$0]! } + [DatabaseValue.text(id)])
                counts.updated += 1
            } else {
                let names = values.keys.sorted()
                try tx.execute("INSERT INTO \(quoted)(\((["id"] + names).map(SQLText.identifier).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: names.count + 1).joined(separator: ", ")))",
                               [DatabaseValue.text(id)] + names.map { values[$0]! })
                counts.inserted += 1
            }
        }
        if deleteMissing {
            let payloadIDs = Set(rows.map(\.id))
            for id in existing.keys.sorted() where !payloadIDs.contains(id) {
                try tx.execute("DELETE FROM \(quoted) WHERE id = ?", [id])
                counts.deleted += 1
            }
        }
        result.tables[table.name] = counts
        // Children: each parent's list, compared and (with deleteMissing) pruned within that parent.
        for (_, plan) in children { try plan.apply(in: tx, result: &result, deleteMissing: deleteMissing) }
    }

    /// Equal values of the same storage class (2 and 2.0 differ; -0.0 and 0.0 differ).
    private func exactlyEqual(_ a: DatabaseValue, _ b: DatabaseValue) -> Bool {
        switch (a, b) {
        case (.real(let x), .real(let y)): return x.bitPattern == y.bitPattern
        default: return a == b
        }
    }
}

extension SharedDatabase {
    /// ``importJSON(_:into:options:)`` for records: syncs `records` into their table with the
    /// same diff (new ids inserted, changed columns patched, equal rows untouched, missing rows
    /// deleted with ``ImportOptions/deleteMissing``).
    @discardableResult
    public func importRecords<R: Record>(_ records: [R], options: ImportOptions = ImportOptions()) throws -> ImportResult {
        let layout = try RecordLayout.of(R.self)
        let objects = try records.map { record -> JSONValue in
            var columns = try RecordEncoder.columns(of: record)
            for column in layout.columns where columns[column.name] == nil { columns[column.name] = .null }
            // As an insert refuses it: JSON (the payload form) would turn it into null.
            if let (column, _) = columns.first(where: { if case .real(let d) = $0.value { return !d.isFinite } else { return false } }) {
                throw TandemError.invalidRecord("\(layout.typeName).\(column) (row '\(record.id)'): an infinite real cannot be stored (JSON has no representation for it)")
            }
            return .object(columns.mapValues(JSONValue.init))
        }
        return try importElements(objects, into: layout.tableName, options: options)
    }
}
