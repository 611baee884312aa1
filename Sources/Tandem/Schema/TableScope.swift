import Foundation

/// Which scope a synced table's rows belong to, for scoped sync through PostgreSQL: a host's
/// database role sees, downloads and writes only the rows of the scopes granted to it
/// (`tandem backend grant`), enforced by the server's row-level security. A table without a scope
/// is global: every host syncs all of it.
///
/// In the schema file: `"scope": {"column": "tenant"}`, or `"scope": {"parent": "folders"}`
/// (`"via": "folder_id"` when the reference column is not `<singular parent>_id` or `<parent>_id`).
///
/// Related documentation: https://www.postgresql.org/docs/15/ddl-rowsecurity.html
public enum TableScope: Sendable, Equatable, Codable {
    /// A row belongs to the scope value in `column` (a `text` or `integer` column of the table).
    case column(String)
    /// A row belongs to the scope of the row of `table` that its column `via` names (the parent
    /// must be scoped by a column of its own: one level).
    case parent(table: String, via: String)

    enum CodingKeys: String, CodingKey { case column, parent, via }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try decoder.rejectUnknownKeys(["column", "parent", "via"], in: "scope")
        switch (try c.decodeIfPresent(String.self, forKey: .column), try c.decodeIfPresent(String.self, forKey: .parent)) {
        case (let column?, nil):
            guard try c.decodeIfPresent(String.self, forKey: .via) == nil else {
                throw TandemError.invalidSchema(SchemaProblem(.invalidScope, "scope: 'via' goes with 'parent', not with 'column'"))
            }
            self = .column(column)
        case (nil, let parent?):
            // An empty `via` is filled in by validation, which knows the table's columns.
            self = .parent(table: parent, via: try c.decodeIfPresent(String.self, forKey: .via) ?? "")
        default:
            throw TandemError.invalidSchema(
                SchemaProblem(.invalidScope, "scope takes either 'column' (the scope column) or 'parent' (the table whose scope the rows share)"))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .column(let column): try c.encode(column, forKey: .column)
        case .parent(let table, let via):
            try c.encode(table, forKey: .parent)
            try c.encode(via, forKey: .via)
        }
    }
}

extension Schema {
    /// Checks each table's scope against the tables and columns, and names the reference column
    /// of a parent scope given without one.
    /// - Throws: ``TandemError/invalidSchema(_:)`` naming the table and what is wrong.
    mutating func resolveScopes() throws {
        for index in tables.indices {
            let table = tables[index]
            guard let scope = table.scope else { continue }
            guard !table.localOnly else {
                throw TandemError.invalidSchema(
                    SchemaProblem(.invalidScope, table: table.name, "table '\(table.name)' is localOnly: its rows never leave the host, so it has no scope"))
            }
            switch scope {
            case .column(let name):
                guard let column = table.columns.first(where: { $0.name == name }) else {
                    throw TandemError.invalidSchema(
                        SchemaProblem(.unknownColumn, table: table.name, column: name, "table '\(table.name)': the scope column '\(name)' is not one of its columns"))
                }
                guard column.type != .real else {
                    throw TandemError.invalidSchema(
                        SchemaProblem(
                            .invalidScope, table: table.name, column: name, "table '\(table.name)': the scope column '\(name)' is real; scopes are text or integer values"))
                }
            case .parent(let parentName, let via):
                guard let parent = tables.first(where: { $0.name == parentName }) else {
                    throw TandemError.invalidSchema(
                        SchemaProblem(.unknownTable, table: table.name, "table '\(table.name)': its scope's parent '\(parentName)' is not a declared table"))
                }
                guard case .column? = parent.scope else {
                    throw TandemError.invalidSchema(
                        SchemaProblem(
                            .invalidScope, table: table.name,
                            "table '\(table.name)': its scope's parent '\(parentName)' must be scoped by a column of its own (one level of parents)"))
                }
                let singular = parentName.hasSuffix("s") ? String(parentName.dropLast()) : parentName
                let candidates = !via.isEmpty ? [via] : singular == parentName ? [parentName + "_id"] : [singular + "_id", parentName + "_id"]
                guard let column = candidates.first(where: { name in table.columns.contains { $0.name == name && $0.type == .text } }) else {
                    throw TandemError.invalidSchema(
                        SchemaProblem(
                            .invalidScope, table: table.name,
                            "table '\(table.name)': no text column \(candidates.map { "'\($0)'" }.joined(separator: " or ")) names its scope's parent row (give it with \"via\")"
                        ))
                }
                tables[index].scope = .parent(table: parentName, via: column)
            }
        }
    }
}
