import Foundation

/// Constraint messages in the user's terms. A write through the view `notes` fails inside its
/// trigger, so SQLite names the data table behind it (`UNIQUE constraint failed: ps_data__notes.id`);
/// the user wrote to `notes`.
enum ConstraintMessage {
    /// SQLite's message with data table names turned back into table names, and a duplicate id
    /// said as such (`a row with id 'x' already exists in notes`), naming the id when it can be
    /// told from the statement's arguments or literals.
    static func rewrite(_ message: String, sql: String?, arguments: [DatabaseValue], on connection: Connection) -> String {
        let unique = "UNIQUE constraint failed: "
        if message.hasPrefix(unique), message.hasSuffix(".id") {
            let dataTable = String(message.dropFirst(unique.count).dropLast(".id".count))
            if let table = InternalTables.declaredTable(ofDataTable: dataTable) {
                let id = duplicateID(in: dataTable, sql: sql, arguments: arguments, on: connection)
                return duplicate(id: id, table: table)
            }
        }
        return message.replacing(dataTableName) { InternalTables.declaredTable(ofDataTable: String($0.0)) ?? String($0.0) }
    }

    /// The message of a value a view's trigger refused for its column's type, or nil for any
    /// other message. `RAISE` takes only a fixed message, so the trigger raises the refusal,
    /// which names the value, through `json_extract` with the message as its path, and SQLite
    /// reports `JSON path error near '<message>'` (quotes doubled): the message is
    /// `<table>.<column> is a(n) <type> column: …` or `<table>.<column>: …`.
    static func typeRefusal(in message: String) -> String? {
        let prefix = "JSON path error near '"
        guard message.hasPrefix(prefix), message.hasSuffix("'"), message.count > prefix.count + 1 else { return nil }
        let inner = String(message.dropFirst(prefix.count).dropLast()).replacingOccurrences(of: "''", with: "'")
        return inner.prefixMatch(of: refusalHead) == nil ? nil : inner
    }

    /// `notes.done is an integer column: ` or `notes.done: `.
    nonisolated(unsafe) private static let refusalHead = try! Regex(
        "([A-Za-z_][A-Za-z0-9_]*)\\.([A-Za-z_][A-Za-z0-9_]*)(?: is an? (?:integer|real|text) column: |: )")

    /// The table and column a refusal of a value (a message Tandem wrote, starting
    /// `notes.done is an integer column: ` or `notes.done: `) names; nil for another message.
    static func refusedColumn(in message: String) -> (table: String, column: String)? {
        guard let match = message.prefixMatch(of: refusalHead), match.count == 3,
            let table = match[1].substring, let column = match[2].substring
        else { return nil }
        return (String(table), String(column))
    }

    /// A duplicate id said in the user's terms; `id` nil when it cannot be told.
    static func duplicate(id: String?, table: String) -> String {
        "a row with \(id.map { "id \(SQLText.literal($0))" } ?? "that id") already exists in table \(table)"
    }

    /// A data table's name anywhere in a message.
    nonisolated(unsafe) private static let dataTableName = try! Regex(
        "(?:\(InternalTables.localDataPrefix)|\(InternalTables.dataPrefix))[A-Za-z_][A-Za-z0-9_]*")

    /// The id that collided: of the texts the statement was given (its arguments and its quoted
    /// literals), the only one that is the id of a row already in the data table. The failed
    /// statement was rolled back, so its own new rows are gone. Nil when none or several match.
    private static func duplicateID(in dataTable: String, sql: String?, arguments: [DatabaseValue], on connection: Connection) -> String? {
        var candidates: [String] = []
        for argument in arguments {
            switch argument {
            case .text(let text): candidates.append(text)
            case .integer(let number): candidates.append(String(number))
            default: break
            }
        }
        if let sql { candidates += quotedLiterals(in: sql) }
        candidates = Array(Set(candidates).prefix(200))
        guard !candidates.isEmpty else { return nil }
        let placeholders = Array(repeating: "?", count: candidates.count).joined(separator: ", ")
        let query = "SELECT id FROM \(SQLText.identifier(dataTable)) WHERE id IN (\(placeholders)) LIMIT 2"
        guard let statement = try? connection.prepare(query),
            let rows = try? statement.fetchAll(candidates.map { .text($0) }), rows.count == 1
        else { return nil }
        return rows[0][0].stringValue
    }

    /// The single-quoted string literals of `sql`, with doubled quotes undone.
    static func quotedLiterals(in sql: String) -> [String] {
        var literals: [String] = []
        var current: String?
        var iterator = sql.makeIterator()
        var pending: Character? = nil
        while let character = pending ?? iterator.next() {
            pending = nil
            guard var text = current else {
                if character == "'" { current = "" }
                continue
            }
            if character == "'" {
                if let next = iterator.next() {
                    if next == "'" { text.append("'"); current = text; continue }
                    pending = next
                }
                literals.append(text)
                current = nil
            } else {
                text.append(character)
                current = text
            }
        }
        return literals
    }
}
