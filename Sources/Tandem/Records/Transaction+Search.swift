import Foundation

/// A record found by a search, with its rank and a snippet of the column asked for.
public struct SearchResult<R: Record>: Sendable where R: Sendable {
    /// The record, as ``DatabaseReader/fetch(_:)`` reads it.
    public var record: R
    /// FTS5's `bm25` rank: lower is a better match (results come best first).
    public var rank: Double
    /// The searched column's text around the matches, each match between the markers; nil
    /// unless a snippet was asked for.
    public var snippet: String?
}

/// Full-text search of a table's ``SearchIndex``, inside a transaction. The SQL is one
/// `SELECT` (``searchSQL(_:matching:syntax:where:_:limit:snippetOf:markers:)``), so a search
/// is a live query too (``DatabaseReader/observe(_:_:onChange:)``).
extension Transaction {
    /// The rows of `table` whose searched text matches `query`, best first (FTS5's `bm25`, then
    /// `id`): the view's columns, then `search_rank` (real, lower is better) and
    /// `search_snippet` (text, or NULL unless `snippetOf` names a searched column).
    /// - Parameters:
    ///   - table: a declared table with a search index (``TableSchema/search``).
    ///   - query: the user's input, read as `syntax` says.
    ///   - syntax: words (the default) or FTS5's syntax (``SearchSyntax``).
    ///   - filter: an SQL condition over the table's columns and `search_rank`.
    ///   - arguments: the values of the filter's `?` parameters, in order.
    ///   - limit: at most this many rows.
    ///   - snippetOf: a searched column whose text around the matches `search_snippet` gives.
    ///   - markers: the text put before and after each match in the snippet.
    /// - Throws: ``TandemError/invalidSearchQuery(position:reason:)`` for a query that cannot run;
    ///   ``TandemError/invalidSchema(_:)`` for a table that is not declared or has no index;
    ///   ``SQLiteError`` for the filter's SQL.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/fts5.html
    public func search(
        _ table: String, matching query: String, syntax: SearchSyntax = .words, where filter: String? = nil,
        _ arguments: [any DatabaseValueConvertible] = [], limit: Int? = nil, snippetOf: String? = nil, markers: (String, String) = ("[", "]")
    ) throws -> [Row] {
        let (sql, bound) = try searchSQL(
            table, matching: query, syntax: syntax, where: filter, arguments, limit: limit, snippetOf: snippetOf, markers: markers)
        do {
            return try fetchAll(sql, bound)
        } catch let error as SQLiteError where error.message.hasPrefix("fts5:") || error.message.hasPrefix("unterminated string") {
            throw Self.queryRefusal(error.message)
        } catch let error as SQLiteError where ResultCode.corrupt ~= error {
            // The query and the filter were checked: what fails now is the index itself, its own
            // tables damaged by another program.
            throw SQLiteError(
                extendedCode: error.extendedCode,
                message: "the search index of \(table) cannot be read (\(error.message)): another program changed its tables",
                path: connection.path)
        }
    }

    /// The SQL and arguments of ``search(_:matching:syntax:where:_:limit:snippetOf:markers:)``;
    /// without `search_rank` when `ranked` is false (the rows still come in its order).
    public func searchSQL(
        _ table: String, matching query: String, syntax: SearchSyntax = .words, where filter: String? = nil,
        _ arguments: [any DatabaseValueConvertible] = [], limit: Int? = nil, snippetOf: String? = nil, markers: (String, String) = ("[", "]"),
        ranked: Bool = true
    ) throws -> (sql: String, arguments: [any DatabaseValueConvertible]) {
        let declared = try searchedTable(table)
        let columns = declared.search?.columns ?? []
        let expression = try SearchQuery.expression(query, syntax: syntax, columns: columns)
        var snippet = "NULL"
        if let snippetOf {
            guard let index = columns.firstIndex(of: snippetOf) else {
                throw TandemError.invalidSchema(
                    SchemaProblem(
                        .invalidSearch, table: table, column: snippetOf,
                        "table '\(table)': '\(snippetOf)' is not a searched column (\(columns.joined(separator: ", ")))"))
            }
            snippet = "snippet(\(declared.quotedSearchTable), \(index), \(SQLText.literal(markers.0)), \(SQLText.literal(markers.1)), '…', 16)"
        }
        let inner = """
            SELECT v.*, bm25(\(declared.quotedSearchTable)) AS search_rank, \(snippet) AS search_snippet FROM \(declared.quotedSearchTable) AS s \
            JOIN \(declared.quotedSearchIDs) AS m ON m.n = s.rowid JOIN \(declared.quotedName) AS v ON v.id = m.id \
            WHERE \(declared.quotedSearchTable) MATCH ?
            """
        let shown = ranked ? "*" : (["id"] + declared.columns.map(\.name) + ["search_snippet"]).map(SQLText.identifier).joined(separator: ", ")
        var sql = "SELECT \(shown) FROM (\(inner))"
        if let filter { sql += " WHERE (\(filter))" }
        sql += " ORDER BY search_rank, id"
        if syntax == .fts5 { try checkQuery(expression, declared) }
        if let filter { try checkFilter(filter, arguments, declared) }
        var bound: [any DatabaseValueConvertible] = [expression] + arguments
        if let limit {
            sql += " LIMIT ?"
            bound.append(max(0, limit))
        }
        return (sql, bound)
    }

    /// Runs the FTS5 expression once, alone: what FTS5 refuses that ``SearchQuery`` let pass is
    /// refused here in the user's terms, never as SQLite's message over Tandem's SQL.
    private func checkQuery(_ expression: String, _ table: TableSchema) throws {
        do {
            _ = try scalar("SELECT count(*) FROM (SELECT rowid FROM \(table.quotedSearchTable) WHERE \(table.quotedSearchTable) MATCH ? LIMIT 1)", [expression])
        } catch let error as SQLiteError {
            throw Self.queryRefusal(error.message)
        }
    }

    /// Prepares the filter alone over the table's view, so that its mistakes (and a count of
    /// arguments that is not its parameters') are said over the user's SQL.
    private func checkFilter(_ filter: String, _ arguments: [any DatabaseValueConvertible], _ table: TableSchema) throws {
        try Self.checkIsOneCondition(filter)
        _ = try fetchAll(
            "SELECT 1 FROM (SELECT *, 0.0 AS search_rank, NULL AS search_snippet FROM \(table.quotedName)) WHERE (\(filter)) LIMIT 0", arguments)
    }

    /// Refuses a filter that is more than one condition: one that closes a parenthesis it did
    /// not open (it would end the search's own), ends a statement or starts a comment outside
    /// quotes.
    static func checkIsOneCondition(_ filter: String) throws {
        var depth = 0
        var quote: Character?
        var previous: Character?
        for c in filter {
            defer { previous = c }
            if let open = quote {
                if c == (open == "[" ? "]" : open) { quote = nil }
                continue
            }
            switch c {
            case "'", "\"", "`", "[": quote = c
            case "(": depth += 1
            case ")":
                depth -= 1
                if depth < 0 { throw TandemError.invalidSQL(sql: filter, reason: "the filter closes a parenthesis it did not open; give one condition") }
            case ";": throw TandemError.invalidSQL(sql: filter, reason: "the filter is one condition, not statements")
            case "-" where previous == "-", "*" where previous == "/":
                throw TandemError.invalidSQL(sql: filter, reason: "the filter is one condition; leave out comments")
            default: break
            }
        }
        if depth != 0 || quote != nil { throw TandemError.invalidSQL(sql: filter, reason: "the filter leaves a parenthesis or a quote open") }
    }

    /// The declared table `name`, which has a search index.
    private func searchedTable(_ name: String) throws -> TableSchema {
        let schema = try SchemaInstaller.cachedStoredSchema(self) ?? Schema(tables: [])
        guard let table = schema.table(named: name) else {
            throw TandemError.invalidSchema(
                SchemaProblem(.unknownTable, table: name, "'\(name)' is not a declared table (declared: \(schema.tables.map(\.name).joined(separator: ", ")))"))
        }
        guard table.search != nil else {
            throw TandemError.invalidSchema(
                SchemaProblem(.invalidSearch, table: name, "table '\(name)' has no search index (declare one in its schema: \"search\": {\"columns\": [...]})"))
        }
        return table
    }

    /// A query FTS5 refused after ``SearchQuery`` let it pass, said without SQLite's words.
    static func queryRefusal(_ message: String) -> TandemError {
        if let near = message.range(of: "near \"") {
            let rest = message[near.upperBound...]
            let token = rest.prefix { $0 != "\"" }
            return .invalidSearchQuery(position: nil, reason: token.isEmpty ? "the query ends too soon" : "FTS5 cannot read the query at '\(token)'")
        }
        return .invalidSearchQuery(position: nil, reason: "FTS5 cannot read the query (\(message.replacingOccurrences(of: "fts5: ", with: "")))")
    }

    /// The records of `R` whose searched text matches `query`, best first (or in `sortBy`'s
    /// order, ties best first), each with its rank and, when `snippetOf` names a searched
    /// column, a snippet; `predicate` keeps those it selects (evaluated as Swift evaluates it),
    /// then `limit` applies.
    /// - Throws: what ``search(_:matching:syntax:where:_:limit:snippetOf:markers:)`` throws;
    ///   ``TandemError/invalidRecord(_:)`` for a type that does not fit its table.
    public func search<R: Record>(
        _ type: R.Type, matching query: String, syntax: SearchSyntax = .words, where predicate: Predicate<R>? = nil,
        sortBy: [SortDescriptor<R>] = [], limit: Int? = nil, snippetOf: String? = nil, markers: (String, String) = ("[", "]")
    ) throws -> [SearchResult<R>] where R: Sendable {
        try searchFound(
            type, matching: query, syntax: syntax, query: RecordQuery(predicate, sortBy: sortBy, limit: limit), snippetOf: snippetOf, markers: markers
        ).map(\.result)
    }

    /// The typed search's results, each with the row it was read from.
    func searchFound<R: Record>(
        _ type: R.Type, matching text: String, syntax: SearchSyntax, query: RecordQuery<R>, snippetOf: String?, markers: (String, String)
    ) throws -> [(result: SearchResult<R>, row: Row)] where R: Sendable {
        let (predicate, sortBy, limit) = (query.predicate, query.sortBy, query.limit)
        let layout = try checkedLayout(R.self)
        let rows = try search(
            layout.tableName, matching: text, syntax: syntax, limit: predicate == nil && sortBy.isEmpty ? limit : nil, snippetOf: snippetOf,
            markers: markers)
        let records = try decodeRecords(R.self, rows: rows, layout: layout)
        var results: [(result: SearchResult<R>, row: Row)] = []
        for (record, row) in zip(records, rows) {
            if let predicate, try !predicate.evaluate(record) { continue }
            results.append((SearchResult(record: record, rank: row["search_rank"]?.doubleValue ?? 0, snippet: row["search_snippet"]?.stringValue), row))
        }
        if !sortBy.isEmpty {
            // Stable: records sortBy finds equal keep their rank order.
            results = results.enumerated().sorted { a, b in
                for descriptor in sortBy {
                    switch descriptor.compare(a.element.result.record, b.element.result.record) {
                    case .orderedAscending: return true
                    case .orderedDescending: return false
                    case .orderedSame: continue
                    }
                }
                return a.offset < b.offset
            }.map(\.element)
        }
        return Array(results.prefix(limit ?? .max))
    }
}

extension DatabaseReader {
    /// ``Transaction/search(_:matching:syntax:where:_:limit:snippetOf:markers:)`` in a read transaction.
    public func search(
        _ table: String, matching query: String, syntax: SearchSyntax = .words, where filter: String? = nil,
        _ arguments: [any DatabaseValueConvertible] = [], limit: Int? = nil, snippetOf: String? = nil, markers: (String, String) = ("[", "]")
    ) throws -> [Row] {
        try read { try $0.search(table, matching: query, syntax: syntax, where: filter, arguments, limit: limit, snippetOf: snippetOf, markers: markers) }
    }

    /// ``Transaction/search(_:matching:syntax:where:sortBy:limit:snippetOf:markers:)`` (records) in a read transaction.
    public func search<R: Record>(
        _ type: R.Type, matching query: String, syntax: SearchSyntax = .words, where predicate: Predicate<R>? = nil,
        sortBy: [SortDescriptor<R>] = [], limit: Int? = nil, snippetOf: String? = nil, markers: (String, String) = ("[", "]")
    ) throws -> [SearchResult<R>] where R: Sendable {
        try read {
            try $0.search(type, matching: query, syntax: syntax, where: predicate, sortBy: sortBy, limit: limit, snippetOf: snippetOf, markers: markers)
        }
    }

    /// A live search: `onChange` gets the rows of
    /// ``search(_:matching:syntax:where:_:limit:snippetOf:markers:)`` now and again after every
    /// commit, of any process, that changes them: which rows match, their order or their
    /// values. They leave `search_rank` out, since it moves with every row written, matching or
    /// not (FTS5's `bm25` weighs a word by how many rows hold it).
    public func observeSearch(
        _ table: String, matching query: String, syntax: SearchSyntax = .words, where filter: String? = nil,
        _ arguments: [any DatabaseValueConvertible] = [], limit: Int? = nil, snippetOf: String? = nil,
        onChange: @escaping @Sendable (Result<[Row], Error>) -> Void
    ) throws -> AnyDatabaseCancellable {
        let (sql, bound) = try read {
            try $0.searchSQL(table, matching: query, syntax: syntax, where: filter, arguments, limit: limit, snippetOf: snippetOf, ranked: false)
        }
        return try observe(sql, bound, onChange: onChange)
    }
}

/// Typed live searches.
extension DatabaseReader {
    /// A typed live search: ``search(_:matching:syntax:where:sortBy:limit:snippetOf:markers:)``'s
    /// results now, then again after every commit, of any process, that changes which records
    /// match, their order, their values or their snippets (not after a change of ranks alone).
    ///
    /// ```swift
    /// for try await found in db.watchSearch(Note.self, matching: "milk") { render(found.map(\.record)) }
    /// ```
    public func watchSearch<R: Record>(
        _ type: R.Type, matching query: String, syntax: SearchSyntax = .words, where predicate: Predicate<R>? = nil,
        sortBy: [SortDescriptor<R>] = [], limit: Int? = nil, snippetOf: String? = nil
    ) -> AsyncThrowingStream<[SearchResult<R>], Error> where R: Sendable {
        AnyDatabaseCancellable.stream { deliver in
            try observeSearch(type, matching: query, syntax: syntax, where: predicate, sortBy: sortBy, limit: limit, snippetOf: snippetOf, onChange: deliver)
        }
    }

    /// ``watchSearch(_:matching:syntax:where:sortBy:limit:snippetOf:)`` with a callback, on the
    /// live query's own queue.
    /// - Throws: what a search throws for its query, table or type, at once.
    public func observeSearch<R: Record>(
        _ type: R.Type, matching query: String, syntax: SearchSyntax = .words, where predicate: Predicate<R>? = nil,
        sortBy: [SortDescriptor<R>] = [], limit: Int? = nil, snippetOf: String? = nil,
        onChange: @escaping @Sendable (Result<[SearchResult<R>], Error>) -> Void
    ) throws -> AnyDatabaseCancellable where R: Sendable {
        let table = try read { try $0.checkedLayout(R.self) }.tableName
        let (sql, _) = try read { try $0.searchSQL(table, matching: query, syntax: syntax, snippetOf: snippetOf) }
        let tables = try read { try $0.connection.tablesRead(by: sql) }
        let records = RecordQuery(predicate, sortBy: sortBy, limit: limit)  // Sendable: it carries the predicate across
        let load: @Sendable (Transaction) throws -> SearchSnapshot<R> = { tx in
            let found = try tx.searchFound(type, matching: query, syntax: syntax, query: records, snippetOf: snippetOf, markers: ("[", "]"))
            return SearchSnapshot(found: found)
        }
        return try observe(readSet: tables, load: load) { onChange($0.map(\.results)) }
    }
}

/// A live search's results, equal when the rows they show are (values and snippets, in order;
/// not the rank, which moves with every row written).
struct SearchSnapshot<R: Record>: Equatable, Sendable where R: Sendable {
    var shown: [[DatabaseValue]]
    var results: [SearchResult<R>]

    init(found: [(result: SearchResult<R>, row: Row)]) {
        shown = found.map { pair in zip(pair.row.columns, pair.row.values).filter { $0.0 != "search_rank" }.map(\.1) }
        results = found.map(\.result)
    }

    static func == (a: SearchSnapshot, b: SearchSnapshot) -> Bool { a.shown == b.shown }
}
