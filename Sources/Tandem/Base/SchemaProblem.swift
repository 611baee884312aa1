/// What is wrong with a schema, a migration or a file's stored schema, as data: its kind, the
/// table and column at fault where there is one, and the message that says it
/// (``TandemError/invalidSchema(_:)``'s payload). An app branches on ``kind``; the message is
/// for people and may be reworded.
public struct SchemaProblem: Sendable, Hashable, CustomStringConvertible {
    /// The kinds of problem.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Not a schema: JSON that does not decode as one, a key given twice in one object, a
        /// migration or step of the wrong shape, or a schema file that cannot be read.
        case malformed
        /// A key the schema's format does not know (the message lists the known ones).
        case unknownKey
        /// A column type other than text, integer or real.
        case unknownType
        /// A name the rules refuse: empty, longer than 64 bytes, characters other than ASCII
        /// letters, digits and `_`, a reserved prefix (`ps_`, `sqlite_`), a word SQLite cannot
        /// use as a view's column.
        case invalidName
        /// A table, column, index or migration id declared twice, or two names SQLite would
        /// spell alike.
        case duplicate
        /// A table declared in a way it cannot work: no columns, too many, `id` declared,
        /// local-only and insert-only at once, its last column dropped, an insert-only table filled.
        case invalidTable
        /// A name of a table that is not declared (an index's, a scope's, a step's).
        case unknownTable
        /// A name of a column its table does not declare.
        case unknownColumn
        /// A scope that cannot work: of a local-only table, of a real column, of a parent that is
        /// not scoped by a column, without a column naming the parent row.
        case invalidScope
        /// A search index that cannot work: no columns, a column that is not declared or not
        /// text, a column named twice, an unknown tokenizer, an insert-only table (it keeps no
        /// rows to search).
        case invalidSearch
        /// A value that does not convert to its column's new type exactly (``row`` names it).
        case typeMismatch
        /// A name taken in the file by an object Tandem did not make.
        case nameCollision
        /// The file stores another schema, which this open may not replace (read-only, or
        /// ``Configuration/upgradesSchema`` false).
        case storedSchemaDiffers
        /// The schema or a data table stored in the file cannot be read as Tandem's.
        case unreadableFile
        /// A step that removes values or rows from the host without saying so.
        case discardNotConfirmed
        /// A migration list that lost or reordered a migration the file applied.
        case migrationsRewritten
    }

    /// The kind of problem.
    public var kind: Kind
    /// The table at fault, by its schema name, where there is one.
    public var table: String?
    /// The column at fault, where there is one.
    public var column: String?
    /// The row at fault (its id), where there is one.
    public var row: String?
    /// The problem in words, naming what is at fault.
    public var message: String

    public init(_ kind: Kind, table: String? = nil, column: String? = nil, row: String? = nil, _ message: String) {
        self.kind = kind
        self.table = table
        self.column = column
        self.row = row
        self.message = message
    }

    public var description: String { message }

    /// The same problem said within `context` (`table 'notes'`, a file's path, `migration 'm1'`),
    /// which also names `table` when it did not yet.
    func within(_ context: String, table: String? = nil) -> SchemaProblem {
        var copy = self
        copy.message = "\(context): \(message)"
        if copy.table == nil { copy.table = table }
        return copy
    }
}
