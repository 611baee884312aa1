/// The objects Tandem generates for a declared table: its data table, its view, the view's
/// INSTEAD OF triggers that write the data table and queue CRUD entries, and its indexes.
extension TableSchema {
    var quotedName: String { SQLText.identifier(name) }
    var quotedDataTable: String { SQLText.identifier(dataTableName) }

    /// The column's value from the row's JSON, as the view shows it (and indexes store it).
    ///
    /// SQLite 3.40's JSON functions cut a string at an escaped NUL (`\u0000`). A row whose JSON
    /// holds one takes a slower path for text columns: the escapes are swapped for a private-use
    /// marker (U+E000, itself escaped as U+E000 '1'), the string is decoded, and the markers are
    /// swapped back, so the text reads back with its NUL characters.
    func extract(_ column: ColumnSchema, from source: String = "data") -> String {
        let path = SQLText.literal("$." + column.name)
        let type = column.type.rawValue.uppercased()
        // A real column has no affinity (unary +), so that SQLite hands the UPDATE trigger the
        // values a statement gave (REAL affinity would round 2^53 + 1 and drop the sign of -0.0)
        // and the trigger applies the column's rule to them (``storedValue(_:_:in:)``).
        let fast = (column.type == .real ? "+" : "") + "CAST(\(source) ->> \(path) AS \(type))"
        guard column.type == .text else { return fast }
        return "(CASE WHEN instr(\(source), '\\u0000') = 0 THEN \(fast) ELSE CAST(\(Self.textWithNUL(source, path: path)) AS TEXT) END)"
    }

    /// The text at `path` (an SQL literal) of the JSON `source`, NULs included, where SQLite's
    /// `->>` and `json_extract` end the text at an escaped NUL: the escape is swapped for a
    /// marker before decoding and back after.
    static func textWithNUL(_ source: String, path: String) -> String {
        let marker = "char(57344)"
        let encoded = "replace(replace(replace(\(source) -> \(path), \(marker), \(marker) || '1'), '\\\\', \(marker) || '2'), '\\u0000', \(marker) || '0')"
        return "replace(replace(replace(json_extract(\(encoded), '$'), \(marker) || '0', char(0)), \(marker) || '2', '\\'), \(marker) || '1', \(marker))"
    }

    /// `source ->> path` for text that may hold NUL (``textWithNUL(_:path:)`` only when it does).
    static func text(_ source: String, path: String) -> String {
        "(CASE WHEN instr(\(source), '\\u0000') = 0 THEN \(source) ->> \(path) ELSE \(textWithNUL(source, path: path)) END)"
    }

    /// `json_object('a', <NEW."a">, …)`, every value as the column stores it (``jsonValue(_:_:)``).
    private func jsonObject(of row: String) -> String {
        "json_object(" + columns.map { "\(SQLText.literal($0.name)), \(jsonValue("\(row).\(SQLText.identifier($0.name))", $0))" }.joined(separator: ", ") + ")"
    }

    var createDataTable: String {
        "CREATE TABLE IF NOT EXISTS \(quotedDataTable)(id TEXT PRIMARY KEY NOT NULL, data TEXT)"
    }

    var createView: String {
        let names = (["id"] + columns.map(\.name)).map(SQLText.identifier).joined(separator: ", ")
        let selects = (["id"] + columns.map { extract($0) }).joined(separator: ", ")
        return "CREATE VIEW \(quotedName)(\(names)) AS SELECT \(selects) FROM \(quotedDataTable)"
    }

    var createIndexes: [String] {
        indexes.map { index in
            let expressions = index.columns.map { name in
                name == "id" ? "id" : columns.first { $0.name.lowercased() == name.lowercased() }.map { extract($0) } ?? SQLText.identifier(name)
            }.joined(separator: ", ")
            let indexName = SQLText.identifier(InternalTables.index(index.name, of: name))
            return "CREATE INDEX IF NOT EXISTS \(indexName) ON \(quotedDataTable)(\(expressions))"
        }
    }

    private var nameLiteral: String { SQLText.literal(name) }

    var idCheck: String {
        "SELECT CASE WHEN NEW.id IS NOT NULL AND (typeof(NEW.id) NOT IN ('text', 'integer') OR NEW.id = '') "
            + "THEN RAISE(ABORT, \(SQLText.literal("\(name).id must be a non-empty text"))) "
            + "WHEN typeof(NEW.id) = 'text' AND NOT \(Self.isUTF8("NEW.id")) THEN RAISE(ABORT, \(SQLText.literal(invalidTextMessage("id")))) END;"
    }

    var createTriggers: [String] {
        let trigger = { (kind: String) in SQLText.identifier(InternalTables.trigger(kind, of: name)) }
        let crudTx = InternalTables.nextTransactionID
        let crudID = InternalTables.nextCrudID
        let recordID = InternalTables.recordLastCrudID
        var insertBody = idCheck
        if insertOnly {
            insertBody += """
                INSERT INTO ps_crud(id, tx_id, data) VALUES (\(crudID), \(crudTx), json_object('op', 'PUT', 'type', \(nameLiteral), \
                'id', coalesce(CAST(NEW.id AS TEXT), \(InternalTables.uuidExpression)), 'data', \(jsonObject(of: "NEW"))));
                \(recordID)
                """
        } else {
            insertBody += """
                INSERT INTO \(quotedDataTable)(id, data) VALUES (coalesce(CAST(NEW.id AS TEXT), \(InternalTables.uuidExpression)), \(jsonObject(of: "NEW")));
                """
            if !localOnly {
                insertBody += """
                    INSERT INTO ps_crud(id, tx_id, data) SELECT \(crudID), \(crudTx), json_object('op', 'PUT', 'type', \(nameLiteral), \
                    'id', d.id, 'data', json(d.data)) FROM \(quotedDataTable) AS d WHERE changes() > 0 AND d.rowid = last_insert_rowid();
                    \(recordID)
                    """
            }
        }
        var triggers = ["CREATE TRIGGER \(trigger("insert")) INSTEAD OF INSERT ON \(quotedName) FOR EACH ROW BEGIN \(insertBody) END"]

        if insertOnly {
            let message = SQLText.literal("\(name) is insert-only: rows cannot be updated or deleted")
            triggers.append("CREATE TRIGGER \(trigger("update")) INSTEAD OF UPDATE ON \(quotedName) FOR EACH ROW BEGIN SELECT RAISE(ABORT, \(message)); END")
            triggers.append("CREATE TRIGGER \(trigger("delete")) INSTEAD OF DELETE ON \(quotedName) FOR EACH ROW BEGIN SELECT RAISE(ABORT, \(message)); END")
            return triggers
        }

        // Only the columns whose values changed are written, locally (json_patch) and in the
        // PATCH entry, from one patch object: a column the statement did not change keeps its
        // stored value exactly, whatever type the view shows it as.
        let changed = columns.map { c in
            let q = SQLText.identifier(c.name)
            return patchMember("NEW.\(q)", from: "OLD.\(q)", c)
        }.joined(separator: " UNION ALL ")
        let patch = "(SELECT json_group_object(k, json(v)) AS patch, count(*) AS n FROM (\(changed)))"
        var updateBody = """
            SELECT CASE WHEN OLD.id IS NOT NEW.id THEN RAISE(ABORT, \(SQLText.literal("\(name).id cannot be changed"))) END;
            """
        if localOnly {
            updateBody += """
                UPDATE \(quotedDataTable) SET data = json_patch(coalesce(data, '{}'), p.patch) FROM \(patch) AS p \
                WHERE id = OLD.id AND p.n > 0;
                """
        } else {
            updateBody += """
                INSERT INTO ps_crud(id, tx_id, data) SELECT \(crudID), \(crudTx), json_object('op', 'PATCH', 'type', \(nameLiteral), \
                'id', OLD.id, 'data', json(p.patch)) FROM \(patch) AS p WHERE p.n > 0;
                UPDATE \(quotedDataTable) SET data = json_patch(coalesce(data, '{}'), (SELECT data -> '$.data' FROM ps_crud WHERE id = last_insert_rowid())) \
                WHERE id = OLD.id AND changes() > 0;
                \(recordID)
                """
        }
        triggers.append("CREATE TRIGGER \(trigger("update")) INSTEAD OF UPDATE ON \(quotedName) FOR EACH ROW BEGIN \(updateBody) END")

        var deleteBody = "DELETE FROM \(quotedDataTable) WHERE id = OLD.id;"
        if !localOnly {
            deleteBody += "INSERT INTO ps_crud(id, tx_id, data) VALUES (\(crudID), \(crudTx), json_object('op', 'DELETE', 'type', \(nameLiteral), 'id', OLD.id));" + recordID
        }
        triggers.append("CREATE TRIGGER \(trigger("delete")) INSTEAD OF DELETE ON \(quotedName) FOR EACH ROW BEGIN \(deleteBody) END")
        return triggers
    }
}
