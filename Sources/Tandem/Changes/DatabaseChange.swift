/// What a committed write changed, as seen by ``SharedDatabase/changes()``.
public struct DatabaseChange: Sendable, Hashable, CustomStringConvertible {
    /// The SQLite tables whose rows changed (`ps_data__notes`, `ps_crud`, …). Empty when ``isUnknown``.
    let rawTables: Set<String>
    /// A writer that does not record its changes committed (the `sqlite3` shell, say), or the
    /// wake-up queue overflowed: any table may have changed.
    public let isUnknown: Bool
    /// The tag bound where this process made the commit (``CommitTag``); nil for other
    /// processes' commits and untagged ones.
    let tag: CommitTag?

    init(rawTables: Set<String>, tag: CommitTag? = nil) {
        self.rawTables = rawTables
        self.isUnknown = false
        self.tag = tag
    }

    private init(unknown: Void, tag: CommitTag? = nil) {
        self.rawTables = []
        self.isUnknown = true
        self.tag = tag
    }

    static let unknown = DatabaseChange(unknown: ())

    /// An unknown change made under `tag`.
    static func unknown(tag: CommitTag?) -> DatabaseChange { DatabaseChange(unknown: (), tag: tag) }

    /// Changed tables by their schema names (`notes` for `ps_data__notes`); internal tables keep
    /// their names (`ps_crud` when the upload queue changed, `ps_kv` for sync state).
    public var tables: Set<String> { Set(rawTables.map(DatabaseChange.publicName)) }

    /// The user's tables among ``tables``: declared tables by their schema names, and names given
    /// to ``SharedDatabase/notifyChanged(tables:)``; never one of Tandem's own (`ps_crud`, `ps_kv`).
    /// Empty when ``isUnknown``, or when a commit changed only Tandem's bookkeeping.
    public var userTables: Set<String> { tables.filter { !InternalTables.isInternal($0) } }

    static func publicName(_ raw: String) -> String {
        InternalTables.declaredTable(ofDataTable: raw) ?? raw
    }

    /// Both changes as one: the union of their tables, or unknown when either is; tagged only
    /// when both are, alike.
    func merged(with other: DatabaseChange) -> DatabaseChange {
        let tag = tag == other.tag ? tag : nil
        return isUnknown || other.isUnknown ? .unknown(tag: tag) : DatabaseChange(rawTables: rawTables.union(other.rawTables), tag: tag)
    }

    /// True if this change may affect a query that reads `readSet` (raw table names).
    func affects(_ readSet: Set<String>) -> Bool {
        isUnknown || !rawTables.isDisjoint(with: readSet)
    }

    /// Equal when the same tables changed (the tag is this process's bookkeeping).
    public static func == (a: DatabaseChange, b: DatabaseChange) -> Bool {
        a.isUnknown == b.isUnknown && a.rawTables == b.rawTables
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(isUnknown)
        hasher.combine(rawTables)
    }

    public var description: String {
        isUnknown ? "unknown tables changed" : "changed: " + tables.sorted().joined(separator: ", ")
    }
}
