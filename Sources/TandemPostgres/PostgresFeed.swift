import Foundation
import Tandem

/// The change feed: batches of whole transactions in the order their rows were written, by
/// snapshots (PgQ's batches), so a transaction left open anywhere in the cluster delays only its
/// own changes. See DESIGN.md, "PostgreSQL feed".
///
/// A batch between a client's settled snapshot `old` and a newer snapshot `new` holds the changes
/// of every transaction visible in `new` and not in `old`: those in `old`'s in-progress list and
/// those from `old.xmax` on (found on the `xid` index). Inside it, changes go by `version`, drawn
/// from a sequence when the row was written: a second writer of a row waits for the first to
/// commit, so a row's changes are in commit order, and a transaction's last version is below any
/// later writer's of its rows. Pages of a batch are read on the `version` index from the
/// batch's lowest version (found once per batch), so a large batch costs each page its own rows.
///
/// (`xmax` is one past the newest transaction that had ended, not the next transaction id: a
/// transaction running when the snapshot was taken may have an id from `xmax` on and be in no
/// list, with versions drawn long before. So the batch's lower bound is read, never assumed.)
///
/// Related documentation: https://www.postgresql.org/docs/15/functions-info.html#FUNCTIONS-PG-SNAPSHOT
enum PostgresFeed {
    /// Where the server stands: its snapshot and its history.
    struct Position {
        var snapshot: PostgresSnapshot
        var history: String
        /// The history row was written in this cluster (its `xmin` is the transaction id it
        /// records); false after a dump was restored into another cluster.
        var historyIsCurrent: Bool
        /// Changes of transactions below this were compacted away.
        var horizon: UInt64?
        /// The version of the current role's grants (scoped sync); 0 for a role with none.
        var grants: Int64 = 0
        /// Row-level security applies to the current role (a scoped sync client, not the administrator).
        var scoped = false
        /// A batch from the snapshot the position was asked after holds a change.
        var hasChanges = false
        /// The rows of ``firstPageAhead(after:limit:)``, when it was sent with the position.
        var firstPage: [[String?]]?

        var settledCursor: PostgresCursor { PostgresCursor(history: history, snapshot: snapshot.text, grants: grants) }
    }

    /// The position now (the snapshot of the caller's transaction, or of this statement), and,
    /// given a settled snapshot `after`, whether a batch from it to that position holds any
    /// change (``Position/hasChanges``): one statement, so the position is at or after every
    /// change it saw.
    /// - Parameters:
    ///   - beginning: statements sent with the query in one round trip, ahead of it (`BEGIN …`:
    ///     the transaction the position is read in, then ``readingSettings``).
    ///   - then: statements sent in that round trip after it: ``firstPageAhead(after:limit:)``,
    ///     whose rows are ``Position/firstPage``, and, for a fetch that commits ahead, `COMMIT`;
    ///     only with `beginning`.
    static func position(
        on db: PostgresConnection, name: String, after old: PostgresSnapshot? = nil, beginning: [String] = [],
        then: [PostgresConnection.Statement] = []
    ) throws -> Position {
        let newer = "xid >= $2::xid8 AND pg_visible_in_snapshot(xid, pg_current_snapshot())"
        let query = PostgresConnection.Statement(
            sql: """
                SELECT pg_current_snapshot()::text,
                       (SELECT value FROM tandem_meta WHERE key = 'history'),
                       (SELECT xmin::text FROM tandem_meta WHERE key = 'history'),
                       (SELECT value FROM tandem_meta WHERE key = 'horizon'),
                       (SELECT value FROM tandem_meta WHERE key = 'layout'),
                       coalesce((SELECT version FROM tandem_grant_versions WHERE role = current_user), 0)::text,
                       row_security_active('tandem_changes'),
                       $1::text IS NOT NULL AND (
                           EXISTS (SELECT 1 FROM tandem_changes WHERE xid = ANY($1::xid8[]) AND pg_visible_in_snapshot(xid, pg_current_snapshot()))
                           OR CASE WHEN row_security_active('tandem_changes') THEN
                               -- A role reads its scopes', the global and its own changes, each on (scope, xid).
                               EXISTS (SELECT 1 FROM tandem_changes WHERE scope = ANY ((SELECT tandem_scopes())::text[]) AND \(newer))
                               OR EXISTS (SELECT 1 FROM tandem_changes WHERE scope IS NULL AND \(newer))
                               OR EXISTS (SELECT 1 FROM tandem_changes WHERE scope = (SELECT ('role:' || current_user) COLLATE \"default\") AND \(newer))
                           ELSE EXISTS (SELECT 1 FROM tandem_changes WHERE \(newer)) END)
                """, parameters: [old?.inProgressArray, old.map { String($0.xmax) }])
        var firstPage: [[String?]]?
        let rows: [[String?]]
        if !beginning.isEmpty {
            let results = try db.pipeline(beginning.map { .init(sql: $0) } + [query] + then)
            rows = results[beginning.count]
            firstPage = then.isEmpty ? nil : results[beginning.count + 1]
        } else {
            rows = try db.execute(query.sql, query.parameters)
        }
        let row = rows.first ?? []
        guard row.count == 8, let snapshot = row[0].flatMap({ $0 }).flatMap(PostgresSnapshot.init), let history = row[1] ?? nil else {
            throw PostgresError("\(name) has no Tandem change feed; run \(Remedy.setUpServer.apiTerms) with the schema", remedy: .setUpServer)
        }
        guard row[4] == PostgresSetup.layout else {
            throw PostgresError("\(name) was set up by an older Tandem; run \(Remedy.setUpServer.apiTerms) with the schema again to upgrade it", remedy: .setUpServer)
        }
        let recorded = history.split(separator: "/").first.flatMap { UInt64($0) }
        let xmin = row[2].flatMap { $0 }.flatMap { UInt64($0) }
        return Position(
            snapshot: snapshot, history: history,
            historyIsCurrent: recorded.map { $0 & 0xffff_ffff } == xmin,
            horizon: row[3].flatMap { $0 }.flatMap { UInt64($0) }, grants: row[5].flatMap { $0 }.flatMap { Int64($0) } ?? 0,
            scoped: row[6] == "t", hasChanges: row[7] == "t", firstPage: firstPage)
    }

    /// The planner setting of an administrator's fetch transaction (`SET LOCAL`, so for it
    /// alone): no sort where another plan exists, so that a page (`… ORDER BY version LIMIT n`)
    /// walks the version key and stops after its n changes. Left to its estimates, the planner
    /// read the rest of the batch on the `(xid, version)` index for every page and sorted it
    /// whenever its statistics lagged behind a log that had just grown by a large batch (it
    /// estimated 142 changes where there were 93,000): a batch of N changes cost N for each of
    /// its pages, 50 ms a page at 100,000. Where a batch starts is still found on that index (a
    /// bitmap scan for its `OR`). A role under row-level security keeps sorts: its pages read
    /// its scopes on the `(scope, xid)` index and sort those rows, where a walk of the version
    /// key would pass every other tenant's changes.
    ///
    /// Related PostgreSQL documentation: https://www.postgresql.org/docs/15/runtime-config-query.html
    static let readingSettings =
        "SELECT set_config('enable_sort', CASE WHEN row_security_active('tandem_changes') THEN 'on' ELSE 'off' END, true)"

    /// Why `cursor` cannot go on from where it is in this server's history, or nil when it can.
    static func fullSyncReason(for cursor: PostgresCursor?, text: String, at position: Position) -> String? {
        guard let cursor else {
            return text.isEmpty ? "first sync" : "the stored cursor is not one of this PostgreSQL backend's (an older Tandem's): syncing from scratch"
        }
        if cursor.history != position.history {
            return "the server's history changed (it was restored from a dump or replaced): this client's cursor belongs to the old one"
        }
        if (cursor.grants ?? 0) != position.grants {
            return "this client's scopes changed (granted or revoked on the server): syncing its new slice"
        }
        let settled = cursor.settled
        if settled.xmax > position.snapshot.xmax {
            return "the server is behind this client's cursor (restored to an earlier point in time)"
        }
        if let horizon = position.horizon, settled.xmin < horizon {
            return "the change log was compacted past this client's cursor (it was away longer than the retention period)"
        }
        return nil
    }

    /// The condition that a change belongs to the batch from `old` ($1: its in-progress list,
    /// $2: its xmax) to `new` ($3).
    private static let inBatch = inBatch(to: "$3::pg_snapshot")

    /// The condition that a change belongs to the batch from `old` ($1, $2) to the snapshot `new`.
    private static func inBatch(to new: String) -> String {
        "(xid = ANY($1::xid8[]) OR (xid >= $2::xid8 AND xid < pg_snapshot_xmax(\(new)))) AND pg_visible_in_snapshot(xid, \(new))"
    }

    /// What a page reads of each change.
    private static let changeColumns = "version, xid::text, op, type, id, data"

    /// The lowest version among the changes of `changes` (a FROM item with its conditions), less
    /// one, as a scalar subquery; NULL when there are none. In a subquery (OFFSET 0), on the xid
    /// index: as `min(version) … WHERE …` the planner walks the version key from the log's start,
    /// past every change ever applied.
    private static func start(of changes: String) -> String {
        "(SELECT min(version) - 1 FROM (SELECT version FROM \(changes) OFFSET 0) start)"
    }

    /// The first page of the batch from the settled `cursor` to the snapshot of the transaction
    /// it runs in, a `REPEATABLE READ` one whose first statement read the position (so the two
    /// snapshots are one): sent with the position in one round trip (``position(on:name:after:beginning:then:)``),
    /// the batch's start found in the same statement. What ``page(on:cursor:position:limit:)``
    /// reads first for an administrator when no full sync is due; it is read ahead before the
    /// position says so, and reads nothing for a role under row-level security (whose page reads
    /// its scopes on their index) and when the server's history (another one, or one restored
    /// into another cluster) or compaction horizon already rule the cursor out.
    static func firstPageAhead(after cursor: PostgresCursor, limit: Int) -> PostgresConnection.Statement {
        let old = cursor.settled
        let batch = inBatch(to: "pg_current_snapshot()")
        return .init(
            sql: """
                SELECT \(changeColumns) FROM tandem_changes
                WHERE NOT row_security_active('tandem_changes')
                  AND (SELECT CASE WHEN value ~ '^[0-9]+/' THEN value = $3 AND split_part(value, '/', 1)::numeric % 4294967296 = xmin::text::numeric END
                       FROM tandem_meta WHERE key = 'history')
                  AND coalesce((SELECT value::numeric FROM tandem_meta WHERE key = 'horizon' AND value ~ '^[0-9]+$'), 0) <= $4::numeric
                  AND version > \(start(of: "tandem_changes WHERE \(batch)"))
                  AND \(batch)
                ORDER BY version LIMIT $5
                """, parameters: [old.inProgressArray, String(old.xmax), cursor.history, String(old.xmin), String(max(1, limit))])
    }

    /// The batch's changes for a role under row-level security: each kind of scope it reads on
    /// the `(scope, xid)` index, so that it reads its own changes and the global ones, not every
    /// tenant's (`tandem_scopes()` and the role's own marker taken once, as InitPlans; the
    /// marker in the default collation, as the index has it, since `current_user` is a `name` in
    /// "C"). The administrator's read goes by
    /// ``inBatch`` on one table, where the version key can serve a large batch's pages in order.
    private static let scopedBatch: String = {
        let range = "xid >= $2::xid8 AND xid < pg_snapshot_xmax($3::pg_snapshot) AND pg_visible_in_snapshot(xid, $3::pg_snapshot)"
        return [
            "SELECT * FROM tandem_changes WHERE xid = ANY($1::xid8[]) AND pg_visible_in_snapshot(xid, $3::pg_snapshot)",
            "SELECT * FROM tandem_changes WHERE scope = ANY ((SELECT tandem_scopes())::text[]) AND \(range)",
            "SELECT * FROM tandem_changes WHERE scope IS NULL AND \(range)",
            "SELECT * FROM tandem_changes WHERE scope = (SELECT ('role:' || current_user) COLLATE \"default\") AND \(range)",
        ].joined(separator: " UNION ALL ")
    }()

    /// The batch's changes as a FROM item, with `extra` conditions.
    private static func batch(scoped: Bool, where extra: String) -> String {
        scoped ? "(\(scopedBatch)) batch WHERE \(extra)" : "tandem_changes WHERE \(extra) AND \(inBatch)"
    }

    /// The lowest version in the batch from `old` to `new`, less one (0 for an empty batch).
    static func batchStart(on db: PostgresConnection, old: PostgresSnapshot, new: String, scoped: Bool) throws -> Int64 {
        let row = try db.execute(
            "SELECT \(start(of: batch(scoped: scoped, where: "true")))", [old.inProgressArray, String(old.xmax), new]
        ).first
        return Int64(row?.first.flatMap { $0 } ?? "") ?? 0
    }

    /// The rows of the batch from `old` to `new` after version `after`, oldest first: at most
    /// `limit` of them, or those up to version `through`.
    static func batchRows(
        on db: PostgresConnection, old: PostgresSnapshot, new: String, scoped: Bool, after: Int64, until end: BatchRowsEnd
    ) throws -> [[String?]] {
        try db.execute(batchRowsSQL(scoped: scoped, until: end), [old.inProgressArray, String(old.xmax), new, String(after), end.parameter])
    }

    /// Where ``batchRows(on:old:new:scoped:after:until:)`` stops.
    enum BatchRowsEnd {
        /// After this many rows.
        case limit(Int)
        /// At this version.
        case through(Int64)

        /// The statement's `$5`.
        var parameter: String {
            switch self {
            case .limit(let limit): String(limit)
            case .through(let version): String(version)
            }
        }
    }

    /// ``batchRows(on:old:new:scoped:after:until:)``'s statement, $5 the limit or the last
    /// version: one statement for each, not `$5 IS NULL OR version <= $5`, so that a prepared
    /// statement's generic plan (``PostgresPreparedStatements``) bounds its scan by both versions.
    static func batchRowsSQL(scoped: Bool, until end: BatchRowsEnd) -> String {
        switch end {
        case .limit: "SELECT \(changeColumns) FROM \(batch(scoped: scoped, where: "version > $4")) ORDER BY version LIMIT $5"
        case .through: "SELECT \(changeColumns) FROM \(batch(scoped: scoped, where: "version > $4 AND version <= $5::bigint")) ORDER BY version"
        }
    }

    /// The next page of the batch `cursor` is in (or starts at `position`): at least `limit`
    /// changes unless the batch ends, then extended until every transaction in it is whole.
    static func page(on db: PostgresConnection, cursor: PostgresCursor, position: Position, limit: Int) throws -> ChangeBatch {
        let old = cursor.settled
        let target = cursor.target ?? position.snapshot.text
        let scoped = position.scoped
        var rows: [[String?]]
        if let ahead = position.firstPage, cursor.target == nil, cursor.after == nil, !scoped {
            rows = ahead  // read with the position, to the same snapshot
        } else {
            let after = try cursor.after ?? batchStart(on: db, old: old, new: target, scoped: scoped)
            rows = try batchRows(on: db, old: old, new: target, scoped: scoped, after: after, until: .limit(max(1, limit)))
        }
        let full = rows.count >= max(1, limit)
        while full, let last = rows.last, let lastVersion = Int64(last[0] ?? "") {
            // Whole transactions: take the rest of every transaction the page holds part of, and
            // what lies between (which may bring in more transactions).
            let xids = "{" + Set(rows.compactMap { $0[1] ?? nil }).sorted().joined(separator: ",") + "}"
            let end =
                Int64(
                    try db.execute(
                        "SELECT max(version) FROM (SELECT version FROM tandem_changes WHERE xid = ANY($1::xid8[]) OFFSET 0) page",
                        [xids]
                    ).first?.first.flatMap { $0 } ?? "") ?? 0
            guard end > lastVersion else { break }
            rows += try batchRows(on: db, old: old, new: target, scoped: scoped, after: lastVersion, until: .through(end))
        }
        let changes = try rows.map(change)
        guard full, let last = rows.last, let lastVersion = Int64(last[0] ?? ""),
            try !batchRows(on: db, old: old, new: target, scoped: scoped, after: lastVersion, until: .limit(1)).isEmpty
        else {
            let settled = PostgresCursor(history: cursor.history, snapshot: target, grants: cursor.grants ?? 0)
            return ChangeBatch(changes: changes, nextCursor: settled.text, hasMore: false)
        }
        var next = cursor
        next.target = target
        next.after = lastVersion
        return ChangeBatch(changes: changes, nextCursor: next.text, hasMore: true)
    }

    /// The next page of a full sync: every synced table's rows as PUTs, read by table name and
    /// id; then the cursor settles at the first page's snapshot, whose later changes follow.
    static func fullSyncPage(
        on db: PostgresConnection, cursor: PostgresCursor?, position: Position,
        reason: String?, limit: Int
    ) throws -> ChangeBatch {
        let base = cursor ?? position.settledCursor
        let tables = try db.execute("SELECT table_name FROM tandem_tables").compactMap { $0[0] ?? nil }.sorted()
        var changes: [ServerChange] = []
        for table in tables where base.table.map({ table >= $0 }) ?? true {
            let function = SQLText.identifier(PostgresSetup.objectName("tandem_row_", table))
            let select = "SELECT tandem_page.id, \(function)(tandem_page.*) FROM \(SQLText.identifier(table)) AS tandem_page"
            let count = String(max(1, limit - changes.count))
            // Two statements, not `$1 IS NULL OR id > $1`: a prepared statement's generic plan
            // (``PostgresPreparedStatements``) could not start the index scan at the id then, and
            // every page would read the table from its first row.
            let rows =
                if let after = table == base.table ? base.afterID : nil {
                    try db.execute("\(select) WHERE tandem_page.id > $1 ORDER BY tandem_page.id LIMIT $2", [after, count])
                } else {
                    try db.execute("\(select) ORDER BY tandem_page.id LIMIT $1", [count])
                }
            changes += try rows.map {
                ServerChange(op: .put, table: table, rowID: PostgresText.unescaped($0[0] ?? ""), data: try PostgresText.unescapedRow($0[1] ?? "{}"))
            }
            if changes.count >= max(1, limit), let last = rows.last?[0] ?? nil {
                var next = base
                next.table = table
                next.afterID = last
                return ChangeBatch(changes: changes, nextCursor: next.text, hasMore: true, fullSyncReason: reason)
            }
        }
        let settled = PostgresCursor(history: base.history, snapshot: base.snapshot, grants: base.grants ?? 0)
        return ChangeBatch(changes: changes, nextCursor: settled.text, hasMore: true, fullSyncReason: reason)
    }

    private static func change(_ row: [String?]) throws -> ServerChange {
        let table = row[3] ?? "", id = PostgresText.unescaped(row[4] ?? "")
        switch row[2] {
        case "PUT": return ServerChange(op: .put, table: table, rowID: id, data: try PostgresText.unescapedRow(row[5] ?? nil))
        case "DELETE": return ServerChange(op: .delete, table: table, rowID: id, data: nil)
        case "TRUNCATE": return ServerChange(op: .truncate, table: table, rowID: "", data: nil)
        default: throw TandemError.invalidBackend("the change log holds an operation '\(row[2] ?? "NULL")' for \(table) id '\(id)'")
        }
    }
}
