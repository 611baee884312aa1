import Tandem

/// `tandem schema --swift`: a `Record` struct per table, in idiomatic Swift that compiles for
/// every name a schema allows.
///
/// - Types are the table's name in UpperCamelCase, its last word made singular (`notes` →
///   `Note`, `todo_items` → `TodoItem`, `categories` → `Category`). A name the generated code or
///   most programs use (`String`, `Data`, `Record`, `Type`…) gets `Record` appended; a name
///   another table already took gets the unchanged plural, or else a number.
/// - Properties are the columns in lowerCamelCase (`created_at` → `createdAt`); a Swift keyword
///   is escaped with backticks (`` `default` ``); a column whose name is lowerCamelCase already
///   keeps it, and one whose converted name is taken (by such a column, or `id`) keeps its own
///   spelling, or else gets a number. When any property differs from its
///   column, `CodingKeys` map them to the columns and ``Record/keyPathColumns`` maps them for
///   predicates and sorts.
enum SwiftRecordSource {
    static func declarations(_ schema: Schema) -> String {
        var text = "import Foundation\nimport Tandem\n"
        var typeNames: Set<String> = []
        for table in schema.tables {
            let typeName = unique([singular(upperCamel(table.name)), upperCamel(table.name)], taken: &typeNames, reserved: reservedTypeNames)
            // Columns already in lowerCamelCase keep their names; the others are converted.
            var propertyNames: Set<String> = ["id"]
            var names: [String: String] = [:]
            for column in table.columns where lowerCamel(column.name) == column.name {
                names[column.name] = unique([column.name], taken: &propertyNames, reserved: [])
            }
            for column in table.columns where names[column.name] == nil {
                names[column.name] = unique([lowerCamel(column.name), column.name], taken: &propertyNames, reserved: [])
            }
            let properties = table.columns.map { (column: $0, name: names[$0.name]!) }
            text += "\nstruct \(typeName): Record, Equatable {\n    var id = \"\"\n"
            for (column, name) in properties {
                let type =
                    switch column.type {
                    case .text: "String";
                    case .integer: "Int64";
                    case .real: "Double"
                    }
                text += "    var \(escaped(name)): \(type)?\n"
            }
            let renamed = properties.filter { $0.name != $0.column.name }
            if !renamed.isEmpty {
                text += "\n    enum CodingKeys: String, CodingKey {\n        case id\n"
                for (column, name) in properties {
                    text += "        case \(escaped(name))" + (name == column.name ? "" : " = \(literal(column.name))") + "\n"
                }
                text += "    }\n"
            }
            text += "\n    static var tableName: String { \(literal(table.name)) }\n"
            if !renamed.isEmpty {
                let pairs = renamed.map { "\(literal($0.name)): \(literal($0.column.name))" }
                text += "    static var keyPathColumns: [String: String] { [\(pairs.joined(separator: ", "))] }\n"
            }
            text += "}\n"
        }
        return text
    }

    /// The first candidate not taken or reserved, else the first with the smallest number
    /// appended that is free.
    static func unique(_ candidates: [String], taken: inout Set<String>, reserved: Set<String>) -> String {
        let usable = candidates.map { reserved.contains($0) ? $0 + "Record" : $0 }
        let chosen =
            usable.first { !taken.contains($0) }
            ?? (2...).lazy.map { "\(usable[0])\($0)" }.first { !taken.contains($0) }!
        taken.insert(chosen)
        return chosen
    }

    /// The words of a name: split at underscores (`todo_items`), the first letter of each made
    /// upper case (`todoItems` → `TodoItems`); a name of underscores only is `Unnamed`.
    static func upperCamel(_ name: String) -> String {
        let words = name.split(separator: "_")
        guard !words.isEmpty else { return "Unnamed" }
        return words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// `created_at` → `createdAt`, `Type` → `type`, `URL` → `url`; leading underscores are kept
    /// (`_private`), and a name of underscores only is kept as it is.
    static func lowerCamel(_ name: String) -> String {
        let prefix = name.prefix { $0 == "_" }
        let words = name.dropFirst(prefix.count).split(separator: "_")
        guard let first = words.first else { return name }
        let head = first.allSatisfy(\.isUppercase) ? first.lowercased() : first.prefix(1).lowercased() + first.dropFirst()
        return prefix + head + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// The last word made singular: `Notes` → `Note`, `Categories` → `Category`, `Boxes` →
    /// `Box`; words ending in `ss`, `us`, `is` or `ias` (`Address`, `Status`, `Analysis`,
    /// `Alias`), words of two letters and words the same in both numbers (`News`) are kept.
    static func singular(_ name: String) -> String {
        let lower = name.lowercased()
        if lower.count <= 2 || lower.hasSuffix("ias") || invariable.contains(where: { lower.hasSuffix($0) }) { return name }
        if lower.count > 4, lower.hasSuffix("ies") { return String(name.dropLast(3)) + (name.last!.isUppercase ? "Y" : "y") }
        if ["sses", "xes", "ches", "shes", "zzes"].contains(where: { lower.hasSuffix($0) }) { return String(name.dropLast(2)) }
        if lower.count > 1, lower.hasSuffix("s"), !["ss", "us", "is"].contains(where: { lower.hasSuffix($0) }) { return String(name.dropLast()) }
        return name
    }

    /// Words ending in `s` that are the same in the singular.
    static let invariable = ["news", "series", "species", "lens", "canvas", "atlas", "gas", "physics", "mathematics", "economics", "chassis"]

    static func escaped(_ name: String) -> String { keywords.contains(name) ? "`\(name)`" : name }

    static func literal(_ text: String) -> String { "\"\(text)\"" }

    /// Words Swift reserves (identifiers only with backticks).
    static let keywords: Set<String> = [
        "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension", "fileprivate", "func", "import",
        "init", "inout", "internal", "let", "nonisolated", "open", "operator", "package", "private", "precedencegroup",
        "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var", "break", "case", "catch",
        "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw",
        "switch", "where", "while", "Any", "as", "await", "false", "is", "nil", "self", "Self", "super", "throws", "true",
        "try", "_",
    ]

    /// Type names a generated struct must not take: those the generated code uses, Swift's and
    /// Foundation's common types, Tandem's public types, and the capitalised keywords.
    static let reservedTypeNames: Set<String> = [
        "String", "Int64", "Double", "Record", "Equatable", "CodingKey", "Foundation", "Tandem", "Swift",
        "Int", "Bool", "Float", "Character", "Array", "Dictionary", "Set", "Optional", "Result", "Error", "Never", "Void",
        "Codable", "Decodable", "Encodable", "Hashable", "Sendable", "Identifiable", "Date", "Data", "UUID", "URL", "Decimal",
        "Any", "AnyObject", "Self", "Type", "Protocol", "SharedDatabase", "Transaction", "Schema", "RecordQuery",
        "DefaultedRecord", "Row", "DatabaseValue", "Configuration",
    ]
}
