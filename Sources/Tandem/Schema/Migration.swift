import Foundation

/// A named change to the stored rows that runs once per database file, GRDB's
/// `DatabaseMigrator` model (https://swiftpackageindex.com/groue/grdb.swift/documentation/grdb/migrations):
/// a schema lists its migrations in order, the file records the ids it applied, and the first
/// process that opens the file with a longer list runs the new ones, in order, in one write
/// transaction under the cross-process write lock, before it installs the declared tables.
///
/// A new file starts at the declared tables with every listed migration recorded as applied:
/// migrations change rows that an older declaration stored.
///
/// ```swift
/// let schema = Schema(tables: [notes], migrations: [
///     Migration("rename-title", uploads: .none, steps: [
///         .renameColumn(table: "notes", from: "title", to: "heading"),
///         .fill(table: "notes", column: "slug", value: "lower(heading)", where: "slug IS NULL"),
///     ])
/// ])
/// ```
///
/// As JSON, in a schema file's `migrations` list: `{"id":"rename-title","uploads":"none",
/// "steps":[{"renameColumn":{"table":"notes","from":"title","to":"heading"}}]}`.
public struct Migration: Sendable, Equatable, Codable {
    /// Whether the row changes a migration makes are uploaded.
    public enum Uploads: String, Sendable, Codable {
        /// Every host runs the migration and computes the same rows (a backfill, a rename): its
        /// row changes are not queued for upload. The server makes the same change itself
        /// (`tandem backend setup`, or the application's own server code).
        case none
        /// A data fix made once, by the host that runs it: its row changes are queued for upload
        /// like any write, in the migration's transaction.
        case changes
    }

    /// One change of a migration. Tables and columns are named as the tables were declared
    /// before the step; SQL expressions (`value`, `where`, `using`, `columns`) are read over the
    /// table's view, with its columns by name.
    public enum Step: Sendable, Equatable {
        /// Renames a column: every stored value moves to the new name exactly as it was stored,
        /// and pending uploads that name the column are rewritten to the new name.
        case renameColumn(table: String, from: String, to: String)
        /// Renames a table: its rows, indexes, downloaded rows and pending uploads follow.
        case renameTable(from: String, to: String)
        /// Declares a column with another type and converts its stored values: by the write rule
        /// (exact conversions only, ``ColumnSchema``) or, with `using`, to the value of that SQL
        /// expression. A value that does not convert refuses the migration, naming the row.
        case changeType(table: String, column: String, to: ColumnSchema.ColumnType, using: String? = nil)
        /// Sets `column` (declared by the new schema, or already) to the SQL expression `value`
        /// for the rows matching `where` (all rows when nil); only rows whose value changes are written.
        case fill(table: String, column: String, value: String, where: String? = nil)
        /// Removes a column and its stored values from every row on this host. `discardValues`
        /// must be true: it says the values leave. Pending uploads keep their values.
        case dropColumn(table: String, column: String, discardValues: Bool)
        /// Removes a table and its rows from this host. `discardRows` must be true: it says the
        /// rows leave. Pending uploads of its rows are kept and upload.
        case dropTable(table: String, discardRows: Bool)
        /// Inserts a row into `into` (declared by the new schema, or already) for each row of
        /// `from` matching `where`, with the same id and each column of `columns` set to its SQL
        /// expression over `from`: with ``dropColumn(table:column:discardValues:)`` a split, with
        /// ``dropTable(table:discardRows:)`` a merge.
        case copyRows(from: String, into: String, columns: [String: String], where: String? = nil)
        /// SQL run through the views, as ``Transaction/execute(_:_:)`` runs it.
        case sql(String)
        /// Swift code given the migration's transaction. Named by `name` in plans and errors;
        /// two such steps compare equal when their names do.
        case swift(name: String, run: @Sendable (Transaction) throws -> Void)

        public static func == (lhs: Step, rhs: Step) -> Bool {
            switch (lhs, rhs) {
            case (.swift(let a, _), .swift(let b, _)): return a == b
            case (.swift, _), (_, .swift): return false
            default: return lhs.description == rhs.description
            }
        }
    }

    /// The migration's id, unique in its schema's list; recorded in the file once applied.
    public var id: String
    /// Whether its row changes upload.
    public var uploads: Uploads
    /// Its steps, run in order.
    public var steps: [Step]
    /// True when a program that declares the migrations before this one may still open the file
    /// to read it once it ran (the migration only adds or fills): such a program reads, and its
    /// writes are refused (``TandemError/schemaMigrated(path:fileVersion:lastMigration:programVersion:)``).
    /// False by default: an older program is refused at open.
    public var readableByOlderVersions: Bool
    /// The migration's row changes made on a PostgreSQL server, for a migration whose uploads are
    /// ``Uploads/none``: statements in PostgreSQL's SQL (`UPDATE notes SET slug = lower(heading)`
    /// for a backfill, `INSERT INTO … SELECT` for a split) that `tandem backend setup` runs once,
    /// in order, after the tables have their columns. Their row changes download to every host
    /// like any; they must compute what the steps compute on a host (`tandem verify` shows a row
    /// where they do not). Empty by default.
    public var server: [String]

    /// A migration named `id`.
    public init(_ id: String, uploads: Uploads, readableByOlderVersions: Bool = false, steps: [Step], server: [String] = []) {
        self.id = id
        self.uploads = uploads
        self.readableByOlderVersions = readableByOlderVersions
        self.steps = steps
        self.server = server
    }

    enum CodingKeys: String, CodingKey { case id, uploads, readableByOlderVersions = "readableByOlder", steps, server }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        try decoder.rejectUnknownKeys(["id", "uploads", "readableByOlder", "steps", "server"], in: "migration '\(id)'")
        readableByOlderVersions = try c.decodeIfPresent(Bool.self, forKey: .readableByOlderVersions) ?? false
        server = try c.decodeIfPresent([String].self, forKey: .server) ?? []
        guard let raw = try c.decodeIfPresent(String.self, forKey: .uploads) else {
            throw TandemError.invalidSchema(
                SchemaProblem(
                    .malformed, "migration '\(id)': say whether its changes upload: \"uploads\": \"none\" (every host runs it) or \"changes\" (a fix made once)"))
        }
        guard let uploads = Uploads(rawValue: raw) else {
            throw TandemError.invalidSchema(SchemaProblem(.malformed, "migration '\(id)': \"uploads\" is \"none\" or \"changes\", not '\(raw)'"))
        }
        self.uploads = uploads
        do {
            steps = try c.decode([Step].self, forKey: .steps)
        } catch TandemError.invalidSchema(let problem) {
            throw TandemError.invalidSchema(problem.within("migration '\(id)'"))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(uploads, forKey: .uploads)
        if readableByOlderVersions { try c.encode(true, forKey: .readableByOlderVersions) }
        try c.encode(steps, forKey: .steps)
        if !server.isEmpty { try c.encode(server, forKey: .server) }
    }
}

extension Migration.Step: CustomStringConvertible {
    /// The step in words: `rename column notes.title to heading`.
    public var description: String {
        switch self {
        case .renameColumn(let table, let from, let to): return "rename column \(table).\(from) to \(to)"
        case .renameTable(let from, let to): return "rename table \(from) to \(to)"
        case .changeType(let table, let column, let type, let using):
            return "change \(table).\(column) to \(type.rawValue)" + (using.map { " using \($0)" } ?? "")
        case .fill(let table, let column, let value, let condition):
            return "fill \(table).\(column) with \(value)" + (condition.map { " where \($0)" } ?? "")
        case .dropColumn(let table, let column, _): return "drop column \(table).\(column)"
        case .dropTable(let table, _): return "drop table \(table)"
        case .copyRows(let from, let into, let columns, let condition):
            let list = columns.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)" }.joined(separator: ", ")
            return "copy rows of \(from) into \(into) (\(list))" + (condition.map { " where \($0)" } ?? "")
        case .sql(let sql): return "run SQL \(sql)"
        case .swift(let name, _): return "run Swift code '\(name)'"
        }
    }
}

extension Migration.Step: Codable {
    private enum Kind: String, CodingKey, CaseIterable {
        case renameColumn, renameTable, changeType, fill, dropColumn, dropTable, copyRows, sql
    }

    private struct Fields: Codable {
        var table: String?
        var column: String?
        var from: String?
        var to: String?
        var into: String?
        var type: String?
        var using: String?
        var value: String?
        var `where`: String?
        var columns: [String: String]?
        var discardValues: Bool?
        var discardRows: Bool?
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: SchemaKey.self)
        guard c.allKeys.count == 1, let key = c.allKeys.first, let kind = Kind(rawValue: key.stringValue) else {
            let names = Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw TandemError.invalidSchema(
                SchemaProblem(.malformed, "a step is an object with one key, the step's kind (\(names)); found \(c.allKeys.map(\.stringValue))"))
        }
        if kind == .sql {
            self = .sql(try c.decode(String.self, forKey: key))
            return
        }
        let allowed: [String] =
            switch kind {
            case .renameColumn: ["table", "from", "to"]
            case .renameTable: ["from", "to"]
            case .changeType: ["table", "column", "type", "using"]
            case .fill: ["table", "column", "value", "where"]
            case .dropColumn: ["table", "column", "discardValues"]
            case .dropTable: ["table", "discardRows"]
            case .copyRows: ["from", "into", "columns", "where"]
            case .sql: []
            }
        try c.superDecoder(forKey: key).rejectUnknownKeys(allowed, in: "step \(kind.rawValue)")
        let f = try c.decode(Fields.self, forKey: key)
        func required<T>(_ value: T?, _ name: String) throws -> T {
            guard let value else { throw TandemError.invalidSchema(SchemaProblem(.malformed, "step \(kind.rawValue) needs \"\(name)\"")) }
            return value
        }
        switch kind {
        case .renameColumn: self = .renameColumn(table: try required(f.table, "table"), from: try required(f.from, "from"), to: try required(f.to, "to"))
        case .renameTable: self = .renameTable(from: try required(f.from, "from"), to: try required(f.to, "to"))
        case .changeType:
            let raw = try required(f.type, "type")
            guard let type = ColumnSchema.ColumnType(rawValue: raw.lowercased()) else {
                throw TandemError.invalidSchema(
                    SchemaProblem(.unknownType, table: f.table, column: f.column, "step changeType: unknown type '\(raw)' (use text, integer or real)"))
            }
            self = .changeType(table: try required(f.table, "table"), column: try required(f.column, "column"), to: type, using: f.using)
        case .fill: self = .fill(table: try required(f.table, "table"), column: try required(f.column, "column"), value: try required(f.value, "value"), where: f.where)
        case .dropColumn:
            self = .dropColumn(table: try required(f.table, "table"), column: try required(f.column, "column"), discardValues: f.discardValues ?? false)
        case .dropTable: self = .dropTable(table: try required(f.table, "table"), discardRows: f.discardRows ?? false)
        case .copyRows:
            self = .copyRows(from: try required(f.from, "from"), into: try required(f.into, "into"), columns: try required(f.columns, "columns"), where: f.where)
        case .sql: self = .sql("")
        }
    }

    /// - Throws: `EncodingError` for a ``swift(name:run:)`` step, which has no JSON form.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: SchemaKey.self)
        let key: Kind
        var f = Fields()
        switch self {
        case .renameColumn(let table, let from, let to): (key, f.table, f.from, f.to) = (.renameColumn, table, from, to)
        case .renameTable(let from, let to): (key, f.from, f.to) = (.renameTable, from, to)
        case .changeType(let table, let column, let type, let using): (key, f.table, f.column, f.type, f.using) = (.changeType, table, column, type.rawValue, using)
        case .fill(let table, let column, let value, let condition): (key, f.table, f.column, f.value, f.where) = (.fill, table, column, value, condition)
        case .dropColumn(let table, let column, let discard): (key, f.table, f.column, f.discardValues) = (.dropColumn, table, column, discard)
        case .dropTable(let table, let discard): (key, f.table, f.discardRows) = (.dropTable, table, discard)
        case .copyRows(let from, let into, let columns, let condition): (key, f.from, f.into, f.columns, f.where) = (.copyRows, from, into, columns, condition)
        case .sql(let sql):
            try c.encode(sql, forKey: SchemaKey(stringValue: Kind.sql.rawValue))
            return
        case .swift(let name, _):
            throw EncodingError.invalidValue(name, .init(codingPath: encoder.codingPath, debugDescription: "a Swift step ('\(name)') has no JSON form"))
        }
        try c.encode(f, forKey: SchemaKey(stringValue: key.rawValue))
    }
}
