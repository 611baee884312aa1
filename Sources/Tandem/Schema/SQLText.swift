/// Quoting for identifiers and literals in generated DDL. Schema names are validated
/// identifiers; they are quoted all the same.
enum SQLText {
    /// `"name"` with embedded quotes doubled.
    static func identifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `'text'` with embedded quotes doubled.
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
