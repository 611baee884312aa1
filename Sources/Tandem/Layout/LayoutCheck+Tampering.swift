/// What writers that do not use Tandem (the `sqlite3` shell, another SQLite program) may have
/// done to Tandem's bookkeeping, which Tandem's own connections refuse (see the authorizer in
/// `SQLite/Connection+Authorizer.swift`): a missing or empty client id or epoch, objects named
/// like Tandem's that it did not make, triggers that write its tables, and malformed entries in
/// the upload queue.
extension LayoutCheck {
    static func bookkeepingFindings(in tx: Transaction) throws -> [LayoutFinding] {
        var found: [LayoutFinding] = []
        let clientID = try tx.scalar("SELECT value FROM ps_kv WHERE key = ?", [StoredKey.clientID.rawValue])
        switch clientID {
        case .text(let id) where !id.isEmpty: break
        default:
            let state =
                switch clientID {
                case .null: "missing"
                case .text: "empty"
                default: "not a text (\(clientID))"
                }
            found.append(
                LayoutFinding(
                    "Tandem's client id is \(state): a sync would upload under it",
                    repair: "Tandem's client id was \(state); made a new one (uploads still queued are sent under it, as another client's)",
                    action: .clientID))
        }
        if case .integer = try tx.scalar("SELECT value FROM ps_kv WHERE key = ?", [StoredKey.epoch.rawValue]) {
        } else {
            found.append(
                LayoutFinding(
                    "Tandem's owner epoch is missing or not an integer",
                    repair: "Tandem's owner epoch was missing or not an integer; set it to 0 (an owner moves it past the backend's when the backend refuses it)",
                    action: .epoch))
        }
        found += try foreignObjectFindings(in: tx)
        found += try malformedQueueFindings(in: tx)
        return found
    }

    /// Objects named like Tandem's (`ps_…`) that Tandem does not make, and triggers, whatever their
    /// names, on Tandem's tables or that write them (their SQL names one).
    private static func foreignObjectFindings(in tx: Transaction) throws -> [LayoutFinding] {
        let ours = Set(ownTables.map(\.name))
        var found: [LayoutFinding] = []
        let objects = try tx.fetchAll(
            """
            SELECT type, name, tbl_name FROM sqlite_master
            WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND (name LIKE 'ps\\_%' ESCAPE '\\' OR (type = 'trigger' AND (tbl_name LIKE 'ps\\_%' ESCAPE '\\' OR sql LIKE '%ps\\_%' ESCAPE '\\')))
            ORDER BY name
            """)
        for object in objects {
            let type = object[0].stringValue ?? "", name = object[1].stringValue ?? "", table = object[2].stringValue ?? ""
            if ours.contains(name) { continue }
            // Data tables (of tables dropped from the schema too: they keep their rows), their
            // declared indexes, and the views' triggers, named as Tandem names them. Whether a
            // declared table's objects are the ones its schema makes is checked table by table.
            if type == "table", InternalTables.declaredTable(ofDataTable: name) != nil { continue }
            if type == "index", let declared = InternalTables.declaredTable(ofDataTable: table), name.hasPrefix(InternalTables.index("", of: declared)) { continue }
            if type == "trigger", ["insert", "update", "delete"].contains(where: { InternalTables.trigger($0, of: table) == name }) { continue }
            // Search indexes (FTS5's tables of them too) and their triggers on the data tables.
            if type == "table", InternalTables.isSearchObject(name) { continue }
            if type == "trigger", let declared = InternalTables.declaredTable(ofDataTable: table),
                ["insert", "update", "delete"].contains(where: { InternalTables.searchTrigger($0, of: declared) == name })
            {
                continue
            }
            if type == "trigger" {
                let on = table.lowercased().hasPrefix("ps_") ? InternalTables.describe(table) : table
                found.append(
                    LayoutFinding("the trigger \(name) on \(on), which Tandem did not make, may write Tandem's tables: drop it (DROP TRIGGER \(SQLText.identifier(name)))"))
            } else {
                found.append(
                    LayoutFinding(
                        "the \(type) \(name), which Tandem did not make, has a name reserved for Tandem (names beginning with ps_): \(foreignObjectRemedy(type: type, name: name))")
                )
            }
        }
        return found
    }

    /// The way out for an object Tandem did not make where Tandem needs the name: never one that
    /// loses rows. A table is renamed (its rows kept); a view, an index or a trigger, which hold
    /// no rows, may be dropped, said with the statement.
    static func foreignObjectRemedy(type: String, name: String) -> String {
        let quoted = SQLText.identifier(name)
        switch type {
        case "view", "index", "trigger":
            return "rename it, or drop it (DROP \(type.uppercased()) \(quoted); a \(type) holds no rows)"
        default:
            return "rename it to keep its rows (ALTER TABLE \(quoted) RENAME TO a name of your own)"
        }
    }

    /// Queue entries the sync engine cannot upload: not a JSON object with an op (PUT, PATCH or
    /// DELETE), a type and a non-empty id, data for a PUT or PATCH, and an integer transaction id.
    private static func malformedQueueFindings(in tx: Transaction) throws -> [LayoutFinding] {
        let rows = try tx.fetchAll(
            """
            SELECT id FROM ps_crud WHERE typeof(tx_id) <> 'integer' OR typeof(data) <> 'text' OR NOT json_valid(data)
                OR json_type(data) <> 'object' OR coalesce(data ->> '$.op' NOT IN ('PUT', 'PATCH', 'DELETE'), 1)
                OR json_type(data, '$.type') IS NOT 'text' OR json_type(data, '$.id') IS NOT 'text' OR data -> '$.id' = '""'
                OR (data ->> '$.op' IN ('PUT', 'PATCH') AND json_type(data, '$.data') IS NOT 'object')
            ORDER BY id LIMIT 11
            """)
        guard !rows.isEmpty else { return [] }
        let ids = rows.prefix(10).compactMap { $0[0].int64Value }.map(String.init).joined(separator: ", ") + (rows.count > 10 ? ", …" : "")
        return [
            LayoutFinding(
                "Tandem's upload queue holds entries it cannot upload (ids \(ids)): each must be a JSON object with an op (PUT, PATCH or DELETE), a type, a non-empty id and, for PUT and PATCH, data"
            )
        ]
    }
}
