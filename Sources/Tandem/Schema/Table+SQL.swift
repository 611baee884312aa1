/// DDL for a table's view, triggers and indexes.
extension Table {
    var quotedName: String { SQLText.identifier(name) }
    var quotedDataTable: String { SQLText.identifier(dataTableName) }

    private func extract(_ column: Column, from source: String = "data") -> String {
        "CAST(\(source) ->> \(SQLText.literal("$." + column.name)) AS \(column.type.rawValue.uppercased()))"
    }

    /// `json_object('a', NEW."a", …)`.
    private func jsonObject(of row: String) -> String {
        "json_object(" + columns.map { "\(SQLText.literal($0.name)), \(Table.jsonValue("\(row).\(SQLText.identifier($0.name))"))" }.joined(separator: ", ") + ")"
    }

    /// A value for SQLite's JSON functions that keeps every digit of a real: they print reals
    /// with 15 significant digits, which does not round-trip a double; 17 do.
    static func jsonValue(_ expression: String) -> String {
        "CASE WHEN typeof(\(expression)) = 'real' THEN json(printf('%!.17g', \(expression))) ELSE \(expression) END"
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
            let indexName = SQLText.identifier("ps_index__\(name)__\(index.name)")
            return "CREATE INDEX IF NOT EXISTS \(indexName) ON \(quotedDataTable)(\(expressions))"
        }
    }

    private var nameLiteral: String { SQLText.literal(name) }

    private var idCheck: String {
        "SELECT CASE WHEN NEW.id IS NOT NULL AND (typeof(NEW.id) NOT IN ('text', 'integer') OR NEW.id = '') " +
        "THEN RAISE(ABORT, \(SQLText.literal("\(name).id must be a non-empty text"))) END;"
    }

    var createTriggers: [String] {
        let trigger = { (kind: String) in SQLText.identifier("ps_view_\(kind)__\(name)") }
        let crudTx = InternalTables.nextTransactionID
        var insertBody = idCheck
        if insertOnly {
            insertBody += """
                INSERT INTO ps_crud(tx_id, data) VALUES (\(crudTx), json_object('op', 'PUT', 'type', \(nameLiteral), \
                'id', coalesce(CAST(NEW.id AS TEXT), \(InternalTables.uuidExpression)), 'data', \(jsonObject(of: "NEW"))));
                """
        } else {
            insertBody += """
                INSERT INTO \(quotedDataTable)(id, data) VALUES (coalesce(CAST(NEW.id AS TEXT), \(InternalTables.uuidExpression)), \(jsonObject(of: "NEW")));
                """
            if !localOnly {
                insertBody += """
                    INSERT INTO ps_crud(tx_id, data) SELECT \(crudTx), json_object('op', 'PUT', 'type', \(nameLiteral), \
                    'id', d.id, 'data', json(d.data)) FROM \(quotedDataTable) AS d WHERE changes() > 0 AND d.rowid = last_insert_rowid();
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

        let sets = columns.map { "\(SQLText.literal("$." + $0.name)), \(Table.jsonValue("NEW.\(SQLText.identifier($0.name))"))" }.joined(separator: ", ")
        var updateBody = """
            SELECT CASE WHEN OLD.id IS NOT NEW.id THEN RAISE(ABORT, \(SQLText.literal("\(name).id cannot be changed"))) END;
            UPDATE \(quotedDataTable) SET data = json_set(coalesce(data, '{}'), \(sets)) WHERE id = OLD.id;
            """
        if !localOnly {
            let changed = columns.map { c in
                let q = SQLText.identifier(c.name)
                return "SELECT \(SQLText.literal(c.name)) AS k, NEW.\(q) AS v WHERE OLD.\(q) IS NOT NEW.\(q)"
            }.joined(separator: " UNION ALL ")
            updateBody += """
                INSERT INTO ps_crud(tx_id, data) SELECT \(crudTx), json_object('op', 'PATCH', 'type', \(nameLiteral), \
                'id', OLD.id, 'data', json(p.patch)) FROM (SELECT json_group_object(k, \(Table.jsonValue("v"))) AS patch, count(*) AS n FROM (\(changed))) AS p WHERE p.n > 0;
                """
        }
        triggers.append("CREATE TRIGGER \(trigger("update")) INSTEAD OF UPDATE ON \(quotedName) FOR EACH ROW BEGIN \(updateBody) END")

        var deleteBody = "DELETE FROM \(quotedDataTable) WHERE id = OLD.id;"
        if !localOnly {
            deleteBody += "INSERT INTO ps_crud(tx_id, data) VALUES (\(crudTx), json_object('op', 'DELETE', 'type', \(nameLiteral), 'id', OLD.id));"
        }
        triggers.append("CREATE TRIGGER \(trigger("delete")) INSTEAD OF DELETE ON \(quotedName) FOR EACH ROW BEGIN \(deleteBody) END")
        return triggers
    }
}
