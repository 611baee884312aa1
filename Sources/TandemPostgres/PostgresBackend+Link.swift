import Tandem

extension PostgresBackend {
    /// The backend's one connection and what goes with it, under one mutex
    /// (``PostgresBackend/withConnection(_:)``).
    struct Link: Sendable {
        /// Uploads, downloads and, once a wait began, `LISTEN` (see
        /// ``PostgresBackend/waitForChanges(after:timeout:)``); nil once lost.
        var connection: PostgresConnection?
        /// Counts the connections made: a wait looks at the feed again after a reconnect.
        var generation = 0
        /// Set by the first wait: every connection made from then on listens.
        var listenWanted = false
        /// Whether `connection` listens (a pooler in transaction mode cannot `LISTEN`: waits then poll).
        var listening = false
        /// Raised when statements read a notification that may announce another's change (libpq
        /// keeps what it read with an answer, where poll(2) does not see it): the wait, woken by
        /// `wakeups`, takes it (``Announcement``).
        var news = Announcement.nothing
        /// The transactions whose notifications raised `news` to ``Announcement/change``; nil
        /// when one named none (or too many came): see ``Announcement/merged(_:_:)``.
        var newsTransactions: [UInt64]? = []
        /// Whether a fetch from a settled cursor commits its transaction in its first round trip:
        /// off after a fetch whose first page was full or whose role is scoped, on again after a
        /// short first page.
        var commitsAhead = true
        /// The server's synced tables and their declared columns, read once (and again when an
        /// upload names a table or column not in it, after a `tandem backend setup`).
        var columnTypes: [String: [(name: String, type: ColumnSchema.ColumnType)]]?
        /// The columns each table serves only for hosts of an older schema, read with ``columnTypes``.
        var keptForOlder: [String: Set<String>] = [:]
    }
}
