import Foundation
import Tandem

/// A whole upload batch in a few statements: one for the markers, then one per run of entries
/// of the same table and operation (and, for PATCH, the same columns) on distinct rows, each
/// reading its rows from one JSON parameter (`json_to_recordset`, which reads a value as its
/// column's type reads text, so `-0.0` and 17-digit reals keep their value). Entries apply in
/// queue order: a run ends where a row comes again, so a row's changes keep their order, and the
/// change log draws versions in the rows' order (AFTER triggers fire in row order).
///
/// Related documentation: https://www.postgresql.org/docs/15/functions-json.html (json_to_recordset)
extension PostgresUpload {
    /// Marks the batch's transactions as applied, in one statement that writes one marker for
    /// the batch (its first and last transaction ids, and each id with its digest); returns those
    /// to apply (the others were applied before: retries). Exactly once holds because uploads of
    /// one client take turns on its `tandem_clients` row (``checkEpoch(_:clientID:)`` locks it):
    /// each batch sees every marker written before it.
    /// - Throws: ``TandemError/transactionConflict(clientID:transactionID:highest:)`` when a
    ///   transaction id was applied with other entries (a client file restored from a backup).
    func markAll(_ transactions: [CrudTransaction], clientID: String) throws -> [CrudTransaction] {
        guard !transactions.isEmpty else { return [] }
        let statement = markStatement(
            transactions, clientID: clientID,
            then: """
                SELECT t::text, d, (SELECT max(coalesce(last_tx_id, tx_id)) FROM tandem_uploads WHERE role = current_user AND client_id = $1)::text
                FROM applied
                """)
        let applied = Dictionary(
            try db.execute(statement.sql, statement.parameters).compactMap { row in
                row[0].flatMap { Int64($0) }.map { ($0, (digest: row[1] ?? "", highest: row[2].flatMap { Int64($0) } ?? 0)) }
            },
            uniquingKeysWith: { a, _ in a })
        if let changed = transactions.first(where: { transaction in applied[transaction.transactionID].map { $0.digest != transaction.digest } ?? false }) {
            // The highest id applied before this batch (the statement reads the markers as they were before its own).
            let highest = applied[changed.transactionID]?.highest ?? 0
            throw TandemError.transactionConflict(clientID: clientID, transactionID: changed.transactionID, highest: highest)
        }
        return transactions.filter { applied[$0.transactionID] == nil }
    }

    /// The one statement that marks a batch: `batch` (its ids and digests) and `applied` (those
    /// of its ids that markers written before cover, with their digests, read through the index
    /// on a marker's last id), then one marker for the others; `then` is the query that ends
    /// it, reading `applied`.
    func markStatement(_ transactions: [CrudTransaction], clientID: String, then: String) -> PostgresConnection.Statement {
        let ids = "{" + transactions.map { String($0.transactionID) }.joined(separator: ",") + "}"
        let digests = "{" + transactions.map(\.digest).joined(separator: ",") + "}"  // hexadecimal: no quoting
        return .init(
            sql: """
                WITH batch AS (SELECT t, d FROM unnest($2::bigint[], $3::text[]) AS b(t, d)),
                applied AS (
                    SELECT a.t, a.d FROM tandem_uploads u
                    CROSS JOIN LATERAL unnest(coalesce(u.tx_ids, ARRAY[u.tx_id]), coalesce(u.digests, ARRAY[u.digest])) AS a(t, d)
                    WHERE u.role = current_user AND u.client_id = $1
                      AND coalesce(u.last_tx_id, u.tx_id) >= (SELECT min(t) FROM batch) AND u.tx_id <= (SELECT max(t) FROM batch)
                      AND a.t IN (SELECT t FROM batch)),
                marked AS (
                    INSERT INTO tandem_uploads(client_id, tx_id, last_tx_id, tx_ids, digests, digest)
                    SELECT $1, min(t), max(t), array_agg(t ORDER BY t), array_agg(d ORDER BY t), ''
                    FROM batch WHERE t NOT IN (SELECT t FROM applied) HAVING count(*) > 0)
                \(then)
                """, parameters: [clientID, ids, digests])
    }

    /// Applies `entries` in runs (see the type).
    /// - Throws: ``TandemError/uploadRejected(table:rowID:reason:)`` for a value a column cannot
    ///   take or a table the server does not sync; PostgreSQL's errors as they come (a caller
    ///   that needs to know which entry a constraint refused applies them one at a time).
    func applyInRuns(_ entries: [CrudEntry]) throws {
        for run in runs(of: entries) { try applyRun(run) }
    }

    /// `entries` cut into runs (see the type).
    func runs(of entries: [CrudEntry]) -> [[CrudEntry]] {
        var runs: [[CrudEntry]] = []
        var start = 0
        while start < entries.count {
            var end = start + 1
            var rows: Set<String> = [entries[start].rowID]
            while end < entries.count, sameRun(entries[start], entries[end]), rows.insert(entries[end].rowID).inserted { end += 1 }
            runs.append(Array(entries[start..<end]))
            start = end
        }
        return runs
    }

    private func sameRun(_ a: CrudEntry, _ b: CrudEntry) -> Bool {
        guard a.table == b.table && a.op == b.op else { return false }
        switch a.op {
        case .patch: return Set((a.data ?? [:]).keys) == Set((b.data ?? [:]).keys)
        // PUTs that write different columns kept for older hosts (one names one, one does not).
        case .put: return putColumns(of: a.table, naming: a.data).map(\.name) == putColumns(of: b.table, naming: b.data).map(\.name)
        case .delete: return true
        }
    }

    private func applyRun(_ run: [CrudEntry]) throws {
        guard run.count > 1 else { return try apply(run[0]) }
        guard columns[run[0].table] != nil else { return try apply(run[0]) }  // refused, naming it
        let statement = try runStatement(run)
        let updated = Set(try db.execute(statement.sql, statement.parameters).compactMap { $0.first ?? nil })
        // Rows a PATCH or a DELETE did not find: one at a time (rare; see `apply`).
        if run[0].op != .put {
            for entry in run where !updated.contains(entry.serverRowID) { try apply(entry) }
        }
    }

    /// The one statement that applies `run` (of a synced table): DELETE; PUT as an upsert of
    /// the declared columns; PATCH as an UPDATE of the named ones. DELETE and PATCH return the
    /// ids they found.
    /// - Throws: ``TandemError/uploadRejected(table:rowID:reason:)`` for a value a column cannot take.
    func runStatement(_ run: [CrudEntry]) throws -> PostgresConnection.Statement {
        let first = run[0]
        let declared = columns[first.table] ?? []
        let types = Dictionary(declared.map { ($0.name, $0.type) }, uniquingKeysWith: { a, _ in a })
        let table = SQLText.identifier(first.table)
        switch first.op {
        case .delete:
            let ids = JSONValue.array(run.map { .string($0.serverRowID) }).jsonText
            return .init(sql: "DELETE FROM \(table) WHERE id IN (SELECT json_array_elements_text($1::json)) RETURNING id", parameters: [ids])
        case .put:
            for entry in run {
                for key in (entry.data ?? [:]).keys where types[key] == nil { try PostgresValues.unknownColumn(key, entry: entry) }
            }
            // The PUTs of a run write the same columns (``sameRun(_:_:)``).
            let written = putColumns(of: first.table, naming: first.data)
            let names = written.map(\.name)
            let rows = try recordset(run, columns: written)
            let list = (["id"] + names.map(SQLText.identifier)).joined(separator: ", ")
            let updates = names.map { "\(SQLText.identifier($0)) = EXCLUDED.\(SQLText.identifier($0))" }.joined(separator: ", ")
            return .init(
                sql: """
                    INSERT INTO \(table)(\(list)) SELECT \(list) FROM json_to_recordset($1::json) AS x(\(recordType(written)))
                    ON CONFLICT (id) DO UPDATE SET \(updates.isEmpty ? "id = EXCLUDED.id" : updates)
                    """, parameters: [rows])
        case .patch:
            let names = (first.data ?? [:]).keys.sorted()
            for name in names where types[name] == nil { try PostgresValues.unknownColumn(name, entry: first) }
            let patched = declared.filter { names.contains($0.name) }
            let rows = try recordset(run, columns: patched)
            let sets = patched.map { "\(SQLText.identifier($0.name)) = x.\(SQLText.identifier($0.name))" }.joined(separator: ", ")
            return .init(
                sql: """
                    UPDATE \(table) SET \(sets.isEmpty ? "id = \(table).id" : sets) FROM json_to_recordset($1::json) AS x(\(recordType(patched)))
                    WHERE \(table).id = x.id RETURNING \(table).id
                    """, parameters: [rows])
        }
    }

    /// `run`'s rows as a JSON array of objects: `id` and each of `columns` as the text PostgreSQL
    /// reads for its type (or null); a value the column cannot take is refused naming the entry.
    /// Written member by member (a batch's thousands of rows, no object built for each).
    private func recordset(_ run: [CrudEntry], columns: [(name: String, type: ColumnSchema.ColumnType)]) throws -> String {
        let keys = columns.map { "," + JSONValue.string($0.name).jsonText + ":" }
        var text = JSONText()
        text.append("[")
        for (index, entry) in run.enumerated() {
            text.append(index == 0 ? "{\"id\":" : ",{\"id\":")
            JSONValue.writeString(entry.serverRowID, to: &text)
            for (column, key) in zip(columns, keys) {
                text.append(key)
                if let value = try PostgresValues.text(entry.data?[column.name] ?? .null, column: column.name, type: column.type, entry: entry) {
                    JSONValue.writeString(value, to: &text)
                } else {
                    text.append("null")
                }
            }
            text.append("}")
        }
        text.append("]")
        return text.string
    }

    private func recordType(_ columns: [(name: String, type: ColumnSchema.ColumnType)]) -> String {
        (["id text"] + columns.map { "\(SQLText.identifier($0.name)) \(PostgresSetup.sqlType($0.type))" }).joined(separator: ", ")
    }
}
