/// Quoting for identifiers and literals in generated DDL. Schema names are validated
/// identifiers; they are quoted all the same. The same rules hold in PostgreSQL, whose backend
/// (another module of this package) uses them too.
package enum SQLText {
    /// `"name"` with embedded quotes doubled.
    package static func identifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `'text'` with embedded quotes doubled.
    package static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
