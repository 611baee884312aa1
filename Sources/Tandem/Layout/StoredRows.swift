import CSQLite

/// A declared table's stored rows read straight from its data table (each row's JSON as
/// stored), for imports that compare a payload with them and exports that stream them: the
/// JSON text is compared or copied without the view extracting every column.
///
/// What the view shows is the rule: a caller that finds a stored JSON it does not read as the
/// view would (another type than the column's, a key twice) asks the view for that row.
struct StoredRows {
    let table: TableSchema
    let connection: Connection
    private let dataTable: String
    private let lookup: String

    init(table: TableSchema, connection: Connection) {
        self.table = table
        self.connection = connection
        dataTable = table.quotedDataTable
        lookup = "SELECT data FROM \(dataTable) WHERE id = ?"
    }

    /// A row's stored JSON, or that there is no row with the id.
    enum Stored {
        case absent
        /// The row's JSON text (nil when its data is NULL), valid inside the body only.
        case present(UnsafeBufferPointer<UInt8>?)
    }

    /// Runs `body` with the stored JSON of the row `id`.
    func withRow<T>(id: String, _ body: (Stored) throws -> T) throws -> T {
        let statement = try connection.cachedStatement(lookup)
        statement.reset()
        defer { statement.reset() }
        try statement.bind(text: id, at: 1)
        guard try statement.step() else { return try body(.absent) }
        return try body(.present(statement.textBytes(at: 0)))
    }

    /// True when the table holds no row.
    func isEmpty() throws -> Bool {
        try connection.scalar("SELECT EXISTS (SELECT 1 FROM \(dataTable))").int64Value == 0
    }

    /// The number of rows.
    func count() throws -> Int64 {
        try connection.scalar("SELECT count(*) FROM \(dataTable)").int64Value ?? 0
    }

    /// Every row's id and stored JSON, ordered by id: SQLite reads the table in storage order and
    /// sorts (its external sort, in bounded memory), several times faster than walking the id
    /// index and fetching each row from wherever it lies.
    func inIDOrder() throws -> Statement {
        try connection.prepare("SELECT id, data FROM \(dataTable) ORDER BY +id")
    }
}
