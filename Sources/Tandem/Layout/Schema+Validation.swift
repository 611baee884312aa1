import Foundation

extension Schema {
    /// Most columns a table may declare: each is two arguments of `json_object` in the triggers,
    /// and SQLite allows 127 arguments per function call (SQLITE_MAX_FUNCTION_ARG).
    public static let maximumColumns = 63

    /// Checks names, types and limits.
    /// - Throws: ``TandemError/invalidSchema(_:)`` naming the table and column at fault.
    public func validate() throws {
        var tableNames: Set<String> = []
        var indexObjects: [String: String] = [:]  // generated index name -> "table.index"
        for table in tables {
            try Schema.checkIdentifier(table.name, what: "table '\(table.name)'", table: table.name)
            let lower = table.name.lowercased()
            guard tableNames.insert(lower).inserted else {
                throw TandemError.invalidSchema(SchemaProblem(.duplicate, table: table.name, "table '\(table.name)' is declared twice"))
            }
            guard !table.columns.isEmpty else {
                throw TandemError.invalidSchema(SchemaProblem(.invalidTable, table: table.name, "table '\(table.name)' has no columns"))
            }
            guard table.columns.count <= Schema.maximumColumns else {
                throw TandemError.invalidSchema(
                    SchemaProblem(
                        .invalidTable, table: table.name, "table '\(table.name)' has \(table.columns.count) columns; at most \(Schema.maximumColumns) are supported"))
            }
            guard !(table.localOnly && table.insertOnly) else {
                throw TandemError.invalidSchema(SchemaProblem(.invalidTable, table: table.name, "table '\(table.name)' cannot be both localOnly and insertOnly"))
            }
            var columnNames: Set<String> = []
            for column in table.columns {
                try Schema.checkIdentifier(column.name, what: "column '\(table.name).\(column.name)'", table: table.name, column: column.name)
                guard column.name.lowercased() != "id" else {
                    throw TandemError.invalidSchema(
                        SchemaProblem(.invalidTable, table: table.name, column: column.name, "column '\(table.name).id' is implicit (a text primary key) and must not be declared"))
                }
                // SQLite (3.40) names a view's column `true` or `false` "columnN" instead, so the
                // column could be neither read nor written through the table's view.
                guard !["true", "false"].contains(column.name.lowercased()) else {
                    throw TandemError.invalidSchema(
                        SchemaProblem(
                            .invalidName, table: table.name, column: column.name,
                            "column '\(table.name).\(column.name)': SQLite cannot name a view's column '\(column.name)' (it reads the word as a boolean); rename it"))
                }
                guard columnNames.insert(column.name.lowercased()).inserted else {
                    throw TandemError.invalidSchema(
                        SchemaProblem(.duplicate, table: table.name, column: column.name, "column '\(table.name).\(column.name)' is declared twice"))
                }
            }
            var indexNames: Set<String> = []
            for index in table.indexes {
                try Schema.checkIdentifier(index.name, what: "index '\(table.name).\(index.name)'", table: table.name)
                guard indexNames.insert(index.name.lowercased()).inserted else {
                    throw TandemError.invalidSchema(SchemaProblem(.duplicate, table: table.name, "index '\(table.name).\(index.name)' is declared twice"))
                }
                guard !index.columns.isEmpty else {
                    throw TandemError.invalidSchema(SchemaProblem(.invalidTable, table: table.name, "index '\(table.name).\(index.name)' has no columns"))
                }
                let generated = InternalTables.index(index.name, of: table.name).lowercased()
                if let other = indexObjects[generated] {
                    throw TandemError.invalidSchema(
                        SchemaProblem(
                            .duplicate, table: table.name, "index '\(table.name).\(index.name)' and index '\(other)' would share the SQLite name '\(generated)'; rename one"))
                }
                indexObjects[generated] = "\(table.name).\(index.name)"
                for column in index.columns where column != "id" && !columnNames.contains(column.lowercased()) {
                    throw TandemError.invalidSchema(
                        SchemaProblem(.unknownColumn, table: table.name, column: column, "index '\(table.name).\(index.name)' names unknown column '\(column)'"))
                }
            }
        }
        for table in tables { try Schema.checkSearch(of: table) }
        _ = try resolvingScopes()
    }

    /// A search index names text columns of its table, each once; an insert-only table keeps no
    /// rows to search.
    static func checkSearch(of table: TableSchema) throws {
        guard let search = table.search else { return }
        func refuse(_ why: String, column: String? = nil) -> TandemError {
            .invalidSchema(SchemaProblem(.invalidSearch, table: table.name, column: column, "table '\(table.name)': its search index \(why)"))
        }
        guard !table.insertOnly else { throw refuse("has no rows to search: an insert-only table keeps none on the host") }
        for column in table.columns where ["search_rank", "search_snippet"].contains(column.name.lowercased()) {
            throw refuse("gives its results a column \(column.name.lowercased()), which is also one of its columns; rename '\(column.name)'", column: column.name)
        }
        guard !search.columns.isEmpty else { throw refuse("names no columns") }
        var seen: Set<String> = []
        for name in search.columns {
            guard let column = table.columns.first(where: { $0.name == name }) else {
                throw refuse("names '\(name)', which is not one of its columns (\(table.columns.map(\.name).joined(separator: ", ")))", column: name)
            }
            guard column.type == .text else {
                throw refuse("names '\(name)', a\(column.type == .integer ? "n" : "") \(column.type.rawValue) column; it indexes text columns", column: name)
            }
            guard seen.insert(name).inserted else { throw refuse("names '\(name)' twice", column: name) }
            guard !["rank", "rowid"].contains(name.lowercased()) else {
                throw refuse("cannot index '\(name)': FTS5 reserves the name (https://www.sqlite.org/fts5.html)", column: name)
            }
        }
    }

    /// The schema with each parent scope's reference column named (see ``TableScope``).
    /// - Throws: ``TandemError/invalidSchema(_:)`` naming the table whose scope is wrong.
    public func resolvingScopes() throws -> Schema {
        var copy = self
        try copy.resolveScopes()
        return copy
    }

    /// Identifiers: a letter or underscore, then letters, digits or underscores; at most 64
    /// characters; no reserved prefix (`ps_`, `sqlite_`).
    /// - Parameters: `table` and `column`: what the name belongs to, for the problem's fields.
    static func checkIdentifier(_ name: String, what: String, table: String? = nil, column: String? = nil) throws {
        func refuse(_ why: String) -> TandemError { .invalidSchema(SchemaProblem(.invalidName, table: table, column: column, "\(what): \(why)")) }
        guard !name.isEmpty else { throw refuse("the name is empty") }
        guard name.utf8.count <= 64 else { throw refuse("the name is longer than 64 characters") }
        let valid = name.unicodeScalars.enumerated().allSatisfy { offset, scalar in
            scalar == "_" || (scalar.isASCII && (CharacterSet.letters.contains(scalar) || (offset > 0 && CharacterSet.decimalDigits.contains(scalar))))
        }
        guard valid else {
            throw refuse("the name must start with a letter or '_' and contain only ASCII letters, digits and '_'")
        }
        let lower = name.lowercased()
        for prefix in ["ps_", "sqlite_"] where lower.hasPrefix(prefix) {
            throw refuse("the prefix '\(prefix)' is reserved")
        }
    }
}

extension Schema {
    /// The columns declared in both schemas whose type differs, as `table.column changed type
    /// from A to B` lines. Stored values are never converted: the view reads them as the new type,
    /// and declaring the old type again reads them as before.
    public func typeChanges(from old: Schema) -> [String] {
        tables.flatMap { table -> [String] in
            guard let before = old.table(named: table.name) else { return [] }
            return table.columns.compactMap { column in
                guard let previous = before.columns.first(where: { $0.name == column.name }), previous.type != column.type else { return nil }
                return "\(table.name).\(column.name) changed type from \(previous.type.rawValue) to \(column.type.rawValue)"
            }
        }
    }
}
