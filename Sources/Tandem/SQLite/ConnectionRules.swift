import Foundation

/// What the layer that owns a file's tables tells each connection it opens on the file: which
/// tables are its own (the authorizer keeps the user's SQL from writing or altering them), what
/// a row change in a table counts for (``RowCount``), and how SQLite's messages read in the
/// user's terms. A connection opened without rules is plain SQLite: nothing is protected or
/// renamed. Tandem's rules are `LayoutRules` (in `Layout/`), so this layer spells no name of
/// Tandem's tables.
protocol ConnectionRules: Sendable {
    /// Whether `table` (or an index or trigger of that name) is one only its owner writes and alters.
    func isProtected(_ table: UnsafePointer<CChar>) -> Bool
    /// Whether `trigger` is one of the owner's own, which may write protected tables.
    func isOwnTrigger(_ trigger: UnsafePointer<CChar>) -> Bool
    /// What a row change in `table` counts for.
    func kind(ofTable table: String) -> ChangedTableKind
    /// The tables the upload queue entries from `rowid` on are for, as tables to record as
    /// changed: asked at the end of a transaction that queued entries no row change of a
    /// synced table explains (an insert-only table's, which reach no data table).
    func tablesQueued(from rowid: Int64, on connection: Connection) throws -> Set<String>
    /// Why a statement the authorizer refused may not run, in the user's terms.
    func reason(for refusal: AuthorizerRefusal) -> String
    /// SQLite's message for a failed statement (`code`, an extended result code) in the user's
    /// terms, with the code it should carry; nil to keep SQLite's.
    func userTerms(
        code: Int32, message: String, sql: String?, arguments: [DatabaseValue],
        on connection: Connection
    ) -> (code: Int32, message: String)?
    /// The rows `statement` returns when it writes through a view (a `RETURNING` clause's rows
    /// as stored), or nil to run it as SQLite would.
    func rowsReturned(by statement: Statement, _ arguments: [DatabaseValue], in tx: Transaction) throws -> [Row]?
    /// The message for a NaN argument written to a column, from the message SQLite gave when an
    /// empty BLOB stood in for it (see ``Statement/nanRefusal(_:)``); nil when it names no column.
    func nanRefusal(in message: String) -> String?
}

/// What a row change in a table counts for (see ``RowCount``).
enum ChangedTableKind {
    /// A row of a declared table that keeps its changes here (local-only).
    case data
    /// A row of a declared table whose every change queues one upload entry.
    case syncedData
    /// An entry of the upload queue.
    case queue
    case other
}
